// OpenSSL for the server's TLS: the server context (Redis's redis_tls_ctx; server/net wraps it
// for its connections), the client context of the server's own outgoing links (a replica's link to
// its primary, the cluster bus's links to other nodes), as Redis builds redis_tls_client_ctx, and
// the handshake and close steps both ends share. The client certificate is tls-client-cert-file /
// tls-client-key-file when set, else tls-cert-file / tls-key-file; the peer's certificate is
// verified against tls-ca-cert-file / tls-ca-cert-dir.
//
// Thread-safety: the functions are reentrant; an SSL object is used by one thread at a time.
#pragma once

#include <memory>
#include <string>

#include "server/core/tls_config.h"

typedef struct ssl_st SSL;
typedef struct ssl_ctx_st SSL_CTX;

namespace sluice::server {

// A server context (connections accepted on the tls-port, the cluster bus's accepted links)
// built from `tls` (its files read now): Redis's checks and settings (certificate and key,
// CA, tls-protocols, ciphers, session cache, DH parameters). nullptr with *error set (Redis's
// text, for the log). The caller owns the result (SSL_CTX_free).
SSL_CTX* NewTlsServerContext(const TlsConfig& tls, std::string* error);

// A client context built from `tls` (its files read now), or nullptr with *error set.
std::shared_ptr<SSL_CTX> BuildTlsClientContext(const TlsConfig& tls, std::string* error);

// A new SSL object over `fd` for `ctx` (client or server end, per `client`), in the modes a
// non-blocking link needs (partial writes from a buffer that may move between tries); nullptr
// when OpenSSL cannot make one. The caller frees it (SSL_free) and keeps owning fd.
SSL* NewTlsSession(SSL_CTX* ctx, int fd, bool client);

enum class TlsProgress { kDone, kWantRead, kWantWrite, kFailed };

// Advances the handshake of `ssl` over a blocking or non-blocking socket: kDone once finished;
// kWantRead / kWantWrite when the socket must become readable / writable before the next step;
// kFailed with *error set (OpenSSL's reason, and why the peer's certificate was refused).
TlsProgress TlsHandshakeStep(SSL* ssl, std::string* error);

// The oldest error OpenSSL queued on this thread ("error:80000002:system library::No such file
// or directory"), the queue emptied; `fallback` when it queued none.
std::string OpenSslError(const char* fallback = "unknown error");

// Sends close_notify once, without waiting for the peer's (never blocks on a non-blocking
// socket: what does not fit in the socket buffer is dropped), when the handshake finished.
void TlsSendCloseNotify(SSL* ssl);

}  // namespace sluice::server
