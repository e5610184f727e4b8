#include "server/core/tls_config.h"

#include <limits>
#include <optional>
#include <string>

#include "server/core/args.h"
#include "server/core/config.h"

namespace sluice::server {

namespace {

using Error = std::optional<std::string>;

// Redis's wording for its boolean and integer options.
Error ParseBool(std::string_view v, bool* out) {
  if (EqualsIgnoreCase(v, "yes")) {
    *out = true;
  } else if (EqualsIgnoreCase(v, "no")) {
    *out = false;
  } else {
    return std::string("argument must be 'yes' or 'no'");
  }
  return std::nullopt;
}

Error ParseRange(std::string_view v, int64_t lo, int64_t hi, int64_t* out) {
  std::optional<int64_t> n = ParseInt64(v);
  if (!n) return std::string("argument couldn't be parsed into an integer");
  if (*n < lo || *n > hi) {
    return "argument must be between " + std::to_string(lo) + " and " + std::to_string(hi) +
           " inclusive";
  }
  *out = *n;
  return std::nullopt;
}

constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();

const char* YesNo(bool b) { return b ? "yes" : "no"; }

// A string option: any value, the empty string included.
#define SLUICE_TLS_STRING(option, field, meaning)    \
  ConfigOption {                                     \
    option, "(none)", meaning, true, false,          \
        [](Config& c, std::string_view v) -> Error { \
          c.tls.field = std::string(v);              \
          return std::nullopt;                       \
        },                                           \
        [](const Config& c) { return c.tls.field; }  \
  }

#define SLUICE_TLS_BOOL(option, field, default_text, meaning)                     \
  ConfigOption {                                                                  \
    option, default_text, meaning, true, false,                                   \
        [](Config& c, std::string_view v) { return ParseBool(v, &c.tls.field); }, \
        [](const Config& c) -> std::string { return YesNo(c.tls.field); }         \
  }

Error SetAuthClients(Config& c, std::string_view v) {
  if (EqualsIgnoreCase(v, "no")) {
    c.tls.auth_clients = TlsAuthClients::kNo;
  } else if (EqualsIgnoreCase(v, "yes")) {
    c.tls.auth_clients = TlsAuthClients::kYes;
  } else if (EqualsIgnoreCase(v, "optional")) {
    c.tls.auth_clients = TlsAuthClients::kOptional;
  } else {
    return std::string("argument(s) must be one of the following: no, yes, optional");
  }
  return std::nullopt;
}

std::string GetAuthClients(const Config& c) {
  switch (c.tls.auth_clients) {
    case TlsAuthClients::kNo:
      return "no";
    case TlsAuthClients::kOptional:
      return "optional";
    case TlsAuthClients::kYes:
      break;
  }
  return "yes";
}

}  // namespace

void AppendTlsConfigOptions(std::vector<ConfigOption>* options) {
  options->insert(
      options->end(),
      {
          {"tls-port", "0",
           "TCP port of the TLS listener (on the bind addresses); 0: none. With port 0 only TLS "
           "is served. CONFIG SET moves the listener (open connections stay).",
           true, false,
           [](Config& c, std::string_view v) -> Error {
             int64_t port = 0;
             if (Error e = ParseRange(v, 0, 65535, &port)) return e;
             c.tls.port = static_cast<int>(port);
             return std::nullopt;
           },
           [](const Config& c) { return std::to_string(c.tls.port); }},
          SLUICE_TLS_STRING("tls-cert-file", cert_file,
                            "The server's certificate (PEM, chain allowed). CONFIG SET of any "
                            "TLS file option reloads the certificates for new connections."),
          SLUICE_TLS_STRING("tls-key-file", key_file,
                            "The server certificate's private key (PEM)."),
          SLUICE_TLS_STRING("tls-key-file-pass", key_file_pass,
                            "Passphrase of an encrypted tls-key-file."),
          SLUICE_TLS_STRING("tls-client-cert-file", client_cert_file,
                            "Certificate for outgoing TLS connections (replication, cluster "
                            "bus; stored only)."),
          SLUICE_TLS_STRING("tls-client-key-file", client_key_file,
                            "Private key of tls-client-cert-file (stored only)."),
          SLUICE_TLS_STRING("tls-client-key-file-pass", client_key_file_pass,
                            "Passphrase of tls-client-key-file (stored only)."),
          SLUICE_TLS_STRING("tls-dh-params-file", dh_params_file,
                            "DH parameters (PEM) for DHE ciphers; none: OpenSSL's built-in."),
          SLUICE_TLS_STRING("tls-ca-cert-file", ca_cert_file,
                            "CA certificates (PEM) that client certificates must chain to."),
          SLUICE_TLS_STRING("tls-ca-cert-dir", ca_cert_dir,
                            "Directory of CA certificates (c_rehash layout), as tls-ca-cert-file."),
          {"tls-auth-clients", "yes",
           "yes: TLS clients must present a certificate signed by the CA; optional: checked when "
           "presented; no: not asked for.",
           true, false, SetAuthClients, GetAuthClients},
          SLUICE_TLS_STRING("tls-protocols", protocols,
                            "TLS versions accepted, of TLSv1 TLSv1.1 TLSv1.2 TLSv1.3 (none: "
                            "\"TLSv1.2 TLSv1.3\")."),
          SLUICE_TLS_STRING("tls-ciphers", ciphers,
                            "OpenSSL cipher list for TLSv1.2 and below (none: OpenSSL's)."),
          SLUICE_TLS_STRING("tls-ciphersuites", ciphersuites,
                            "OpenSSL ciphersuites for TLSv1.3 (none: OpenSSL's)."),
          SLUICE_TLS_BOOL("tls-prefer-server-ciphers", prefer_server_ciphers, "no",
                          "yes: the server's cipher order wins over the client's."),
          SLUICE_TLS_BOOL("tls-session-caching", session_caching, "yes",
                          "yes: TLS sessions are cached so clients can resume them."),
          {"tls-session-cache-size", "20480", "Most TLS sessions cached.", true, false,
           [](Config& c, std::string_view v) {
             return ParseRange(v, 0, kIntMax, &c.tls.session_cache_size);
           },
           [](const Config& c) { return std::to_string(c.tls.session_cache_size); }},
          {"tls-session-cache-timeout", "300", "Seconds a cached TLS session may be resumed.", true,
           false,
           [](Config& c, std::string_view v) {
             return ParseRange(v, 0, kIntMax, &c.tls.session_cache_timeout);
           },
           [](const Config& c) { return std::to_string(c.tls.session_cache_timeout); }},
          SLUICE_TLS_BOOL("tls-replication", replication, "no",
                          "yes: replication over TLS (stored; used once replication lands)."),
          SLUICE_TLS_BOOL("tls-cluster", cluster, "no",
                          "yes: the cluster bus over TLS (stored; used once cluster mode lands)."),
      });
}

#undef SLUICE_TLS_STRING
#undef SLUICE_TLS_BOOL

bool IsTlsContextOption(std::string_view name) {
  if (name.size() < 4 || !EqualsIgnoreCase(name.substr(0, 4), "tls-")) return false;
  for (const char* other : {"tls-port", "tls-auth-clients"}) {
    if (EqualsIgnoreCase(name, other)) return false;
  }
  return true;
}

}  // namespace sluice::server
