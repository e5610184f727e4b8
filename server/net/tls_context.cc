#include "server/net/tls_context.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

#include <cstring>
#include <sstream>
#include <utility>

#include "server/core/args.h"
#include "server/core/logging.h"

namespace sluice::server {

namespace {

// The oldest error OpenSSL queued on this thread ("error:80000002:system library::No such file
// or directory"), the queue emptied.
std::string OpenSslError() {
  unsigned long code = ERR_peek_error();
  std::string text = "unknown error";
  if (code != 0) {
    char buffer[256];
    ERR_error_string_n(code, buffer, sizeof(buffer));
    text = buffer;
  }
  ERR_clear_error();
  return text;
}

// tls-protocols: the SSL_OP_NO_* options that leave only the named versions. False on a name
// Redis does not know or an empty set.
bool ProtocolOptions(const std::string& protocols, uint64_t* options) {
  const std::string text = protocols.empty() ? "TLSv1.2 TLSv1.3" : protocols;
  bool v10 = false, v11 = false, v12 = false, v13 = false;
  std::istringstream in(text);
  for (std::string word; in >> word;) {
    if (EqualsIgnoreCase(word, "tlsv1")) {
      v10 = true;
    } else if (EqualsIgnoreCase(word, "tlsv1.1")) {
      v11 = true;
    } else if (EqualsIgnoreCase(word, "tlsv1.2")) {
      v12 = true;
    } else if (EqualsIgnoreCase(word, "tlsv1.3")) {
      v13 = true;
    } else {
      return false;
    }
  }
  if (!v10 && !v11 && !v12 && !v13) return false;
  *options = (v10 ? 0 : SSL_OP_NO_TLSv1) | (v11 ? 0 : SSL_OP_NO_TLSv1_1) |
             (v12 ? 0 : SSL_OP_NO_TLSv1_2) | (v13 ? 0 : SSL_OP_NO_TLSv1_3);
  return true;
}

// tls-key-file-pass, given to OpenSSL while the key is read.
int PassphraseCallback(char* buf, int size, int /*rwflag*/, void* userdata) {
  const auto* pass = static_cast<const std::string*>(userdata);
  if (pass == nullptr || size <= 0) return 0;
  const int n = static_cast<int>(std::min(pass->size(), static_cast<size_t>(size)));
  std::memcpy(buf, pass->data(), static_cast<size_t>(n));
  return n;
}

}  // namespace

std::shared_ptr<asio::ssl::context> TlsContexts::Build(const TlsConfig& tls, std::string* error) {
  ERR_clear_error();
  if (tls.cert_file.empty()) {
    *error = "No tls-cert-file configured!";
    return nullptr;
  }
  if (tls.key_file.empty()) {
    *error = "No tls-key-file configured!";
    return nullptr;
  }
  if ((tls.auth_clients != TlsAuthClients::kNo || tls.replication || tls.cluster) &&
      tls.ca_cert_file.empty() && tls.ca_cert_dir.empty()) {
    *error =
        "Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, "
        "tls-replication or tls-auth-clients are enabled!";
    return nullptr;
  }
  uint64_t protocol_options = 0;
  if (!ProtocolOptions(tls.protocols, &protocol_options)) {
    *error =
        "Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', 'TLSv1.2' and "
        "'TLSv1.3'.";
    return nullptr;
  }
  std::shared_ptr<asio::ssl::context> context;
  try {
    context = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_server);
  } catch (const std::exception& e) {
    *error = std::string("Failed to create a TLS context: ") + e.what();
    return nullptr;
  }
  SSL_CTX* ctx = context->native_handle();
  // (OpenSSL 3 refuses client-initiated renegotiation by default.)
  uint64_t options = SSL_OP_NO_SSLv2 | SSL_OP_NO_SSLv3 | SSL_OP_NO_COMPRESSION | protocol_options;
  if (tls.prefer_server_ciphers) options |= SSL_OP_CIPHER_SERVER_PREFERENCE;
  SSL_CTX_set_options(ctx, options);
  if (tls.session_caching) {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);
    SSL_CTX_sess_set_cache_size(ctx, static_cast<long>(tls.session_cache_size));
    SSL_CTX_set_timeout(ctx, static_cast<long>(tls.session_cache_timeout));
    static const unsigned char kSessionContext[] = "sluice";
    SSL_CTX_set_session_id_context(ctx, kSessionContext, sizeof(kSessionContext) - 1);
  } else {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  }

  std::string pass = tls.key_file_pass;
  SSL_CTX_set_default_passwd_cb(ctx, PassphraseCallback);
  SSL_CTX_set_default_passwd_cb_userdata(ctx, &pass);
  const bool cert_ok = SSL_CTX_use_certificate_chain_file(ctx, tls.cert_file.c_str()) > 0;
  std::string cert_error = cert_ok ? "" : OpenSslError();
  const bool key_ok =
      cert_ok && SSL_CTX_use_PrivateKey_file(ctx, tls.key_file.c_str(), SSL_FILETYPE_PEM) > 0;
  std::string key_error = key_ok ? "" : OpenSslError();
  SSL_CTX_set_default_passwd_cb_userdata(ctx, nullptr);
  SSL_CTX_set_default_passwd_cb(ctx, nullptr);
  if (!cert_ok) {
    *error = "Failed to load certificate: " + tls.cert_file + ": " + cert_error;
    return nullptr;
  }
  if (!key_ok) {
    *error = "Failed to load private key: " + tls.key_file + ": " + key_error;
    return nullptr;
  }
  if (SSL_CTX_check_private_key(ctx) <= 0) {
    *error = "The private key " + tls.key_file + " does not match the certificate " +
             tls.cert_file + ": " + OpenSslError();
    return nullptr;
  }
  if (!tls.ca_cert_file.empty() || !tls.ca_cert_dir.empty()) {
    if (SSL_CTX_load_verify_locations(
            ctx, tls.ca_cert_file.empty() ? nullptr : tls.ca_cert_file.c_str(),
            tls.ca_cert_dir.empty() ? nullptr : tls.ca_cert_dir.c_str()) <= 0) {
      *error = "Failed to configure CA certificate(s) file/directory: " + OpenSslError();
      return nullptr;
    }
  }
  if (!tls.ciphers.empty() && SSL_CTX_set_cipher_list(ctx, tls.ciphers.c_str()) <= 0) {
    ERR_clear_error();
    *error = "Failed to configure ciphers: " + tls.ciphers;
    return nullptr;
  }
  if (!tls.ciphersuites.empty() && SSL_CTX_set_ciphersuites(ctx, tls.ciphersuites.c_str()) <= 0) {
    ERR_clear_error();
    *error = "Failed to configure ciphersuites: " + tls.ciphersuites;
    return nullptr;
  }
  if (!tls.dh_params_file.empty()) {
    BIO* bio = BIO_new_file(tls.dh_params_file.c_str(), "r");
    EVP_PKEY* dh = bio == nullptr ? nullptr : PEM_read_bio_Parameters(bio, nullptr);
    if (bio != nullptr) BIO_free(bio);
    if (dh == nullptr || SSL_CTX_set0_tmp_dh_pkey(ctx, dh) <= 0) {
      if (dh != nullptr) EVP_PKEY_free(dh);
      *error = "Failed to load DH parameters from " + tls.dh_params_file + ": " + OpenSslError();
      return nullptr;
    }
  } else {
    SSL_CTX_set_dh_auto(ctx, 1);
  }
  ERR_clear_error();
  return context;
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
