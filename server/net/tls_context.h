// TLS contexts: builds an OpenSSL context (asio::ssl::context) from the tls-* options
// (server/core/tls_config.h) and holds the one new TLS connections use. CONFIG SET of a file
// option builds a new one (the certificates and keys read again from disk); a connection keeps
// the context it was accepted with, so a reload never touches connections already open. A
// context that cannot be built (a missing or mismatched certificate or key, a bad protocol or
// cipher list) is refused with a reason and the current one stays.
//
// Thread-safe: Apply runs on the thread of CONFIG SET (or startup), Current/auth_clients on the
// control thread that accepts.
#pragma once

#include <asio/ssl.hpp>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "server/core/tls_config.h"

namespace sluice::server {

class TlsContexts {
 public:
  // A server context for `tls`, or nullptr with *error set (the reason, for the log).
  static std::shared_ptr<asio::ssl::context> Build(const TlsConfig& tls, std::string* error);

  // Takes tls-auth-clients for the next accepts; when `tls` needs a context (tls.needed()) and
  // `reload` is set or there is none yet, builds one and makes it current. False (the reason
  // logged, nothing changed) when it cannot be built.
  bool Apply(const TlsConfig& tls, bool reload);

  // The context for a connection accepted now; nullptr before the first Apply.
  std::shared_ptr<asio::ssl::context> Current() const;
  TlsAuthClients auth_clients() const { return auth_.load(std::memory_order_relaxed); }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<asio::ssl::context> current_;
  std::atomic<TlsAuthClients> auth_{TlsAuthClients::kYes};
};

}  // namespace sluice::server
