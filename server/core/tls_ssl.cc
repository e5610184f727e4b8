#include "server/core/tls_ssl.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cstring>
#include <sstream>

#include "server/core/args.h"

namespace sluice::server {

namespace {

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

std::string OpenSslError(const char* fallback) {
  unsigned long code = ERR_peek_error();
  std::string text = fallback;
  if (code != 0) {
    char buffer[256];
    ERR_error_string_n(code, buffer, sizeof(buffer));
    text = buffer;
  }
  ERR_clear_error();
  return text;
}

SSL_CTX* NewTlsServerContext(const TlsConfig& tls, std::string* error) {
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
  std::unique_ptr<SSL_CTX, void (*)(SSL_CTX*)> owned(SSL_CTX_new(TLS_server_method()),
                                                     SSL_CTX_free);
  SSL_CTX* ctx = owned.get();
  if (ctx == nullptr) {
    *error = "Failed to create a TLS context: " + OpenSslError();
    return nullptr;
  }
  SSL_CTX_set_min_proto_version(ctx, TLS1_VERSION);  // tls-protocols narrows it below
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
  return owned.release();
}

std::shared_ptr<SSL_CTX> BuildTlsClientContext(const TlsConfig& tls, std::string* error) {
  ERR_clear_error();
  std::shared_ptr<SSL_CTX> ctx(SSL_CTX_new(TLS_client_method()), SSL_CTX_free);
  if (ctx == nullptr) {
    *error = "SSL_CTX_new: " + OpenSslError();
    return nullptr;
  }
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
  const bool own = !tls.client_cert_file.empty();
  const std::string& cert = own ? tls.client_cert_file : tls.cert_file;
  const std::string& key = own ? tls.client_key_file : tls.key_file;
  const std::string& pass = own ? tls.client_key_file_pass : tls.key_file_pass;
  // OpenSSL's default passphrase callback reads the userdata as a C string, during the load only.
  if (!pass.empty()) {
    SSL_CTX_set_default_passwd_cb_userdata(ctx.get(), const_cast<char*>(pass.c_str()));
  }
  const bool cert_ok =
      cert.empty() || SSL_CTX_use_certificate_chain_file(ctx.get(), cert.c_str()) == 1;
  if (!cert_ok) *error = "loading certificate " + cert + ": " + OpenSslError();
  const bool key_ok = !cert_ok || key.empty() ||
                      SSL_CTX_use_PrivateKey_file(ctx.get(), key.c_str(), SSL_FILETYPE_PEM) == 1;
  if (!key_ok) *error = "loading private key " + key + ": " + OpenSslError();
  SSL_CTX_set_default_passwd_cb_userdata(ctx.get(), nullptr);
  if (!cert_ok || !key_ok) return nullptr;
  const char* ca_file = tls.ca_cert_file.empty() ? nullptr : tls.ca_cert_file.c_str();
  const char* ca_dir = tls.ca_cert_dir.empty() ? nullptr : tls.ca_cert_dir.c_str();
  if ((ca_file != nullptr || ca_dir != nullptr) &&
      SSL_CTX_load_verify_locations(ctx.get(), ca_file, ca_dir) != 1) {
    *error = "loading the CA certificates: " + OpenSslError();
    return nullptr;
  }
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  return ctx;
}

SSL* NewTlsSession(SSL_CTX* ctx, int fd, bool client) {
  SSL* ssl = SSL_new(ctx);
  if (ssl == nullptr) return nullptr;
  if (SSL_set_fd(ssl, fd) != 1) {
    SSL_free(ssl);
    return nullptr;
  }
  SSL_set_mode(ssl, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (client) {
    SSL_set_connect_state(ssl);
  } else {
    SSL_set_accept_state(ssl);
  }
  return ssl;
}

TlsProgress TlsHandshakeStep(SSL* ssl, std::string* error) {
  ERR_clear_error();
  const int r = SSL_do_handshake(ssl);
  if (r == 1) return TlsProgress::kDone;
  const int code = SSL_get_error(ssl, r);
  if (code == SSL_ERROR_WANT_READ) return TlsProgress::kWantRead;
  if (code == SSL_ERROR_WANT_WRITE) return TlsProgress::kWantWrite;
  const char* fallback = code == SSL_ERROR_SYSCALL || code == SSL_ERROR_ZERO_RETURN
                             ? "the peer closed the connection during the handshake"
                             : "handshake failed";
  *error = OpenSslError(fallback);
  const long verify = SSL_get_verify_result(ssl);
  if (verify != X509_V_OK) *error += std::string(": ") + X509_verify_cert_error_string(verify);
  return TlsProgress::kFailed;
}

void TlsSendCloseNotify(SSL* ssl) {
  if (ssl == nullptr || !SSL_is_init_finished(ssl)) return;
  ERR_clear_error();
  (void)SSL_shutdown(ssl);
  ERR_clear_error();
}

}  // namespace sluice::server
