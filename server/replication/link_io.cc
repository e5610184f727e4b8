#include "server/replication/link_io.h"

#include <fcntl.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace sluice::server::replication {

LinkIo::~LinkIo() {
  if (ssl_ != nullptr) {
    // The primary sees a clean close; non-blocking first, so a full socket buffer never holds
    // the closing thread.
    fcntl(fd_, F_SETFL, fcntl(fd_, F_GETFL, 0) | O_NONBLOCK);
    TlsSendCloseNotify(ssl_);
    SSL_free(ssl_);
  }
  if (fd_ >= 0) close(fd_);
}

bool LinkIo::StartTls(const TlsConfig& tls, std::string* error) {
  ctx_ = BuildTlsClientContext(tls, error);
  if (ctx_ == nullptr) return false;
  ssl_ = NewTlsSession(ctx_.get(), fd_, /*client=*/true);
  if (ssl_ == nullptr) {
    *error = "SSL_new failed";
    return false;
  }
  SSL_set_mode(ssl_, SSL_MODE_AUTO_RETRY);
  for (;;) {
    std::string why;
    const TlsProgress step = TlsHandshakeStep(ssl_, &why);
    if (step == TlsProgress::kDone) return true;
    if (step == TlsProgress::kFailed) {
      *error = "TLS handshake: " + why;
      return false;
    }
    pollfd p{fd_, static_cast<short>(step == TlsProgress::kWantRead ? POLLIN : POLLOUT), 0};
    const int r = poll(&p, 1, kHandshakeTimeoutMs);
    if (r == 0) {
      *error = "TLS handshake: timed out";
      return false;
    }
    if (r < 0 && errno != EINTR) {
      *error = "TLS handshake: poll failed";
      return false;
    }
  }
}

bool LinkIo::SendAll(std::string_view bytes) {
  while (!bytes.empty()) {
    if (ssl_ != nullptr) {
      const int n = SSL_write(ssl_, bytes.data(), static_cast<int>(bytes.size()));
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    const ssize_t n = send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      return false;
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

LinkIo::ReadResult LinkIo::Read(std::string* buf, int timeout_ms) {
  // TLS may hold decrypted bytes already read from the socket: no poll for those.
  if (ssl_ == nullptr || SSL_pending(ssl_) == 0) {
    pollfd p{fd_, POLLIN, 0};
    const int r = poll(&p, 1, timeout_ms);
    if (r == 0 || (r < 0 && errno == EINTR)) return ReadResult::kTimeout;
    if (r < 0) return ReadResult::kClosed;
  }
  // At most 16 KB a read: the replica applies and ACKs what one read brought, so a read bounds
  // how long a write waits for the ACK that covers it (docs/replication.md, replica lag).
  char tmp[16384];
  const ssize_t n =
      ssl_ != nullptr ? SSL_read(ssl_, tmp, sizeof(tmp)) : recv(fd_, tmp, sizeof(tmp), 0);
  if (n <= 0) return ReadResult::kClosed;
  buf->append(tmp, static_cast<size_t>(n));
  return ReadResult::kData;
}

}  // namespace sluice::server::replication
