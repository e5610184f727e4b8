#include "server/net/tls_context.h"

#include <utility>

#include "server/core/logging.h"
#include "server/core/tls_ssl.h"

namespace sluice::server {

std::shared_ptr<asio::ssl::context> TlsContexts::Build(const TlsConfig& tls, std::string* error) {
  SSL_CTX* ctx = NewTlsServerContext(tls, error);
  if (ctx == nullptr) return nullptr;
  return std::make_shared<asio::ssl::context>(ctx);  // takes ownership
}

bool TlsContexts::Apply(const TlsConfig& tls, bool reload) {
  std::lock_guard lock(mu_);
  if (tls.needed() && (reload || current_ == nullptr)) {
    std::string error;
    std::shared_ptr<asio::ssl::context> context = Build(tls, &error);
    if (context == nullptr) {
      LogError(error);
      return false;
    }
    current_ = std::move(context);
    if (reload) LogInfo("TLS: certificates and settings reloaded for new connections");
  }
  auth_.store(tls.auth_clients, std::memory_order_relaxed);
  return true;
}

std::shared_ptr<asio::ssl::context> TlsContexts::Current() const {
  std::lock_guard lock(mu_);
  return current_;
}

}  // namespace sluice::server
