// TLS options (tls-*, as redis.conf names them): the values of Config::tls and their rows of the
// option table (server/core/config.h). The server room that serves TLS (server/net/tls_context.h)
// builds OpenSSL contexts from them; this file only parses, prints and checks their ranges.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::server {

struct ConfigOption;

// tls-auth-clients: whether a TLS client must present a certificate signed by the CA.
enum class TlsAuthClients { kNo, kYes, kOptional };

// A plain value type; fields state their defaults (Redis 7.0's).
struct TlsConfig {
  int port = 0;  // tls-port; 0: no TLS listener
  std::string cert_file;
  std::string key_file;
  std::string key_file_pass;
  std::string client_cert_file;  // outgoing links (replication, cluster bus); "": cert_file
  std::string client_key_file;
  std::string client_key_file_pass;
  std::string dh_params_file;
  std::string ca_cert_file;
  std::string ca_cert_dir;
  TlsAuthClients auth_clients = TlsAuthClients::kYes;
  std::string protocols;     // "TLSv1.2 TLSv1.3" (the default when empty)
  std::string ciphers;       // TLSv1.2 and below; "": OpenSSL's default
  std::string ciphersuites;  // TLSv1.3; "": OpenSSL's default
  bool prefer_server_ciphers = false;
  bool session_caching = true;
  int64_t session_cache_size = 20480;
  int64_t session_cache_timeout = 300;  // seconds
  bool replication = false;             // a replica's link to its primary over TLS
  bool cluster = false;                 // the cluster bus over TLS (read at start)

  // A TLS context is needed (Redis's rule: a TLS port, or TLS for replication or the bus).
  bool needed() const { return port != 0 || replication || cluster; }
};

// What applying tls-* options at run time did (ServerState::ApplyTls): a TLS context that could
// not be built, or a tls-port that could not be bound, changes nothing.
enum class TlsApplyResult { kOk, kContextFailed, kListenFailed };

// Appends the tls-* rows to `options` (ConfigOptions() in config.cc calls it once).
void AppendTlsConfigOptions(std::vector<ConfigOption>* options);

// The tls-* options whose CONFIG SET rebuilds the TLS context from the files (Redis's
// applyTlsCfg): every one but tls-port and tls-auth-clients (read at each accept).
bool IsTlsContextOption(std::string_view name);

}  // namespace sluice::server
