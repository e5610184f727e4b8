#include "server/net/tls_stream.h"

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <utility>

namespace sluice::server {

TlsStream::TlsStream(asio::ip::tcp::socket& socket, std::shared_ptr<asio::ssl::context> context,
                     TlsAuthClients auth)
    : context_(std::move(context)), stream_(socket, *context_), timer_(socket.get_executor()) {
  // tls-auth-clients, as Redis applies it to each accepted connection.
  int mode = SSL_VERIFY_NONE;
  if (auth == TlsAuthClients::kYes) mode = SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
  if (auth == TlsAuthClients::kOptional) mode = SSL_VERIFY_PEER;
  SSL_set_verify(stream_.native_handle(), mode, nullptr);
}

void TlsStream::Handshake(std::shared_ptr<void> keep_alive, std::function<void(std::string)> done) {
  timer_.expires_after(kHandshakeTimeout);
  timer_.async_wait([this, keep_alive](const std::error_code& ec) {
    if (ec) return;  // the handshake ended first
    timed_out_ = true;
    std::error_code ignored;
    stream_.next_layer().close(ignored);  // the pending handshake completes with an error
  });
  stream_.async_handshake(asio::ssl::stream_base::server,
                          [this, keep_alive, done = std::move(done)](const std::error_code& ec) {
                            timer_.cancel();
                            done(ec ? Reason(ec) : std::string());
                          });
}

bool TlsStream::Established() { return SSL_is_init_finished(stream_.native_handle()) == 1; }

void TlsStream::Shutdown(std::shared_ptr<void> keep_alive, std::function<void()> done) {
  std::error_code ignored;
  stream_.next_layer().cancel(ignored);  // a pending read ends (its handler sees the close)
  auto finish = std::make_shared<std::function<void()>>(std::move(done));
  timer_.expires_after(kCloseNotifyTimeout);
  timer_.async_wait([this, keep_alive, finish](const std::error_code& ec) {
    if (ec) return;  // the shutdown ended first
    std::error_code e;
    stream_.next_layer().close(e);  // the pending shutdown completes with an error
  });
  stream_.async_shutdown([this, keep_alive, finish](const std::error_code&) {
    timer_.cancel();
    (*finish)();
  });
}

std::string TlsStream::Reason(const std::error_code& ec) {
  if (timed_out_) {
    return "handshake timed out after " + std::to_string(kHandshakeTimeout.count()) + " s";
  }
  if (ec == asio::error::eof || ec == asio::ssl::error::stream_truncated) {
    return "the client closed the connection during the handshake";
  }
  std::string reason = ec.message();
  const long verify = SSL_get_verify_result(stream_.native_handle());
  if (verify != X509_V_OK) {
    reason += std::string(": ") + X509_verify_cert_error_string(verify);
  }
  return reason;
}

}  // namespace sluice::server
