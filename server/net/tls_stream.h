// A connection's TLS transport: an OpenSSL stream over the connection's own TCP socket (which
// the Connection keeps owning), with the server handshake run asynchronously on the connection's
// I/O thread and bounded by a timer, so a silent, half-open or garbage-sending peer never holds
// more than its own connection, and never longer than kHandshakeTimeout. Reads and writes go
// through stream() (one read and one write may be in flight at once, as on the plain socket).
//
// Threading: used on the connection's thread only.
#pragma once

#include <asio.hpp>
#include <asio/ssl.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "server/core/tls_config.h"

namespace sluice::server {

class TlsStream {
 public:
  static constexpr std::chrono::seconds kHandshakeTimeout{10};
  static constexpr std::chrono::milliseconds kCloseNotifyTimeout{1000};
  using Stream = asio::ssl::stream<asio::ip::tcp::socket&>;

  // `socket` must outlive this stream. `auth`: tls-auth-clients when the client was accepted.
  TlsStream(asio::ip::tcp::socket& socket, std::shared_ptr<asio::ssl::context> context,
            TlsAuthClients auth);
  TlsStream(const TlsStream&) = delete;
  TlsStream& operator=(const TlsStream&) = delete;

  Stream& stream() { return stream_; }

  // Runs the server side of the handshake; then done("") once it succeeded, or done(reason)
  // ("certificate verify failed: certificate has expired", "timed out after 10 s") after
  // which the caller closes the socket. `keep_alive` (the connection) is held by the pending
  // handlers.
  void Handshake(std::shared_ptr<void> keep_alive, std::function<void(std::string)> done);

  // Whether the handshake finished (close_notify makes sense).
  bool Established();
  // Sends close_notify (asio's async_shutdown, after cancelling a read in flight; no write may
  // be in flight) and waits for the peer's at most kCloseNotifyTimeout; then done(), after
  // which the caller closes the socket. Never blocks the thread.
  void Shutdown(std::shared_ptr<void> keep_alive, std::function<void()> done);

 private:
  // The handshake's error in words, with OpenSSL's verification result when it failed there.
  std::string Reason(const std::error_code& ec);

  std::shared_ptr<asio::ssl::context> context_;  // outlives stream_'s SSL object
  Stream stream_;
  asio::steady_timer timer_;
  bool timed_out_ = false;
};

}  // namespace sluice::server
