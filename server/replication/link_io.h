// The bytes of a replica's link to its primary: a connected blocking socket, or TLS over it
// (tls-replication yes, as Redis: the client certificate from tls-client-cert-file /
// tls-client-key-file, else tls-cert-file / tls-key-file; the primary's certificate verified
// against tls-ca-cert-file / tls-ca-cert-dir). Used by the link's thread (reads and sends) and
// its keepalive thread (sends only, while the thread reading loads the RDB). Owns the socket.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "server/core/tls_config.h"
#include "server/core/tls_ssl.h"

namespace sluice::server::replication {

class LinkIo {
 public:
  explicit LinkIo(int fd) : fd_(fd) {}
  ~LinkIo();  // closes the socket (after close_notify over TLS)
  LinkIo(const LinkIo&) = delete;
  LinkIo& operator=(const LinkIo&) = delete;

  int fd() const { return fd_; }
  // The client side of a TLS handshake over the socket (server/core/tls_ssl.h), each step
  // bounded by kHandshakeTimeoutMs; false with *error set.
  bool StartTls(const TlsConfig& tls, std::string* error);
  bool SendAll(std::string_view bytes);
  enum class ReadResult { kData, kTimeout, kClosed };
  // Appends what arrives within timeout_ms.
  ReadResult Read(std::string* buf, int timeout_ms);

 private:
  static constexpr int kHandshakeTimeoutMs = 10000;
  int fd_;
  std::shared_ptr<SSL_CTX> ctx_;
  SSL* ssl_ = nullptr;
};

}  // namespace sluice::server::replication
