#include "server/replication/link_io.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace sluice::server::replication {

namespace {

std::string LastSslError(const char* what) {
  const unsigned long e = ERR_get_error();
  char text[256] = "unknown error";
  if (e != 0) ERR_error_string_n(e, text, sizeof(text));
  return std::string(what) + ": " + text;
}

}  // namespace

LinkIo::~LinkIo() {
  if (ssl_ != nullptr) SSL_free(ssl_);
  if (ctx_ != nullptr) SSL_CTX_free(ctx_);
  if (fd_ >= 0) close(fd_);
}

bool LinkIo::StartTls(const TlsConfig& tls, std::string* error) {
  ctx_ = SSL_CTX_new(TLS_client_method());
  if (ctx_ == nullptr) {
    *error = LastSslError("SSL_CTX_new");
    return false;
  }
  SSL_CTX_set_min_proto_version(ctx_, TLS1_2_VERSION);
  const bool own = !tls.client_cert_file.empty();
  const std::string& cert = own ? tls.client_cert_file : tls.cert_file;
  const std::string& key = own ? tls.client_key_file : tls.key_file;
  const std::string& pass = own ? tls.client_key_file_pass : tls.key_file_pass;
  if (!pass.empty()) {
    SSL_CTX_set_default_passwd_cb_userdata(ctx_, const_cast<char*>(pass.c_str()));
  }
  if (!cert.empty() && SSL_CTX_use_certificate_chain_file(ctx_, cert.c_str()) != 1) {
    *error = LastSslError(("loading certificate " + cert).c_str());
    return false;
  }
  if (!key.empty() && SSL_CTX_use_PrivateKey_file(ctx_, key.c_str(), SSL_FILETYPE_PEM) != 1) {
    *error = LastSslError(("loading private key " + key).c_str());
    return false;
  }
  const char* ca_file = tls.ca_cert_file.empty() ? nullptr : tls.ca_cert_file.c_str();
  const char* ca_dir = tls.ca_cert_dir.empty() ? nullptr : tls.ca_cert_dir.c_str();
  if ((ca_file != nullptr || ca_dir != nullptr) &&
      SSL_CTX_load_verify_locations(ctx_, ca_file, ca_dir) != 1) {
    *error = LastSslError("loading the CA certificates");
    return false;
  }
  SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, nullptr);
  ssl_ = SSL_new(ctx_);
  if (ssl_ == nullptr || SSL_set_fd(ssl_, fd_) != 1) {
    *error = LastSslError("SSL_new");
    return false;
  }
  SSL_set_mode(ssl_, SSL_MODE_AUTO_RETRY);
  if (SSL_connect(ssl_) != 1) {
    *error = LastSslError("TLS handshake");
    return false;
  }
  return true;
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
  char tmp[65536];
  const ssize_t n =
      ssl_ != nullptr ? SSL_read(ssl_, tmp, sizeof(tmp)) : recv(fd_, tmp, sizeof(tmp), 0);
  if (n <= 0) return ReadResult::kClosed;
  buf->append(tmp, static_cast<size_t>(n));
  return ReadResult::kData;
}

}  // namespace sluice::server::replication
