// TLS options (server/core/tls_config.h): parsing from the file and flags, CONFIG GET/SET with
// Redis 7.0's words, the reload hook's failure keeping the old values, and the context builder's
// refusals (server/net/tls_context.h). Handshakes and real certificates:
// tests/blackbox/test_tls.py.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "server/core/config.h"
#include "server/core/server_state.h"
#include "server/net/tls_context.h"
#include "tests/server/harness.h"

namespace sluice::server::testing {

TEST_CASE("tls-* options from the config file, with Redis's defaults") {
  Config c;
  CHECK(c.tls.port == 0);
  CHECK(c.tls.auth_clients == TlsAuthClients::kYes);
  CHECK(c.tls.session_cache_size == 20480);
  CHECK(c.tls.session_cache_timeout == 300);
  CHECK(c.tls.session_caching);
  CHECK(!c.tls.needed());
  CHECK(ApplyConfigText(c,
                        "tls-port 6380\ntls-cert-file /a/s.crt\ntls-key-file /a/s.key\n"
                        "tls-auth-clients optional\ntls-protocols \"TLSv1.2 TLSv1.3\"\n"
                        "tls-replication yes\n",
                        "t") == "");
  CHECK(c.tls.port == 6380);
  CHECK(c.tls.cert_file == "/a/s.crt");
  CHECK(c.tls.auth_clients == TlsAuthClients::kOptional);
  CHECK(c.tls.protocols == "TLSv1.2 TLSv1.3");
  CHECK(c.tls.replication);
  CHECK(c.tls.needed());
  CHECK(ApplyConfigText(c, "tls-port 70000\n", "t") ==
        "t:1: bad value '70000' for 'tls-port': argument must be between 0 and 65535 inclusive");
}

TEST_CASE("CONFIG GET and SET of tls-* as Redis words them") {
  Harness h;
  CHECK(h.Cmd("CONFIG GET tls-auth-clients") == Arr({Bulk("tls-auth-clients"), Bulk("yes")}));
  CHECK(h.Cmd("CONFIG GET tls-session-cache-size") ==
        Arr({Bulk("tls-session-cache-size"), Bulk("20480")}));
  CHECK(h.Cmd("CONFIG SET tls-auth-clients maybe") ==
        Err("ERR CONFIG SET failed (possibly related to argument 'tls-auth-clients') - "
            "argument(s) must be one of the following: no, yes, optional"));
  CHECK(h.Cmd("CONFIG SET tls-replication maybe") ==
        Err("ERR CONFIG SET failed (possibly related to argument 'tls-replication') - argument "
            "must be 'yes' or 'no'"));
  CHECK(h.Cmd("CONFIG SET tls-session-cache-size -1") ==
        Err("ERR CONFIG SET failed (possibly related to argument 'tls-session-cache-size') - "
            "argument must be between 0 and 2147483647 inclusive"));
  CHECK(h.Cmd("CONFIG SET tls-port 65536") ==
        Err("ERR CONFIG SET failed (possibly related to argument 'tls-port') - argument must be "
            "between 0 and 65535 inclusive"));
  CHECK(h.Cmd("CONFIG SET tls-port 6380") == Ok());  // no Server here: nothing to bind
  CHECK(h.Cmd("CONFIG GET tls-port") == Arr({Bulk("tls-port"), Bulk("6380")}));
  CHECK(h.Cmd("CONFIG SET tls-auth-clients OPTIONAL") == Ok());
  CHECK(h.Cmd("CONFIG GET tls-auth-clients") == Arr({Bulk("tls-auth-clients"), Bulk("optional")}));
  CHECK(h.Cmd("CONFIG SET tls-ciphers HIGH") == Ok());  // no hook: nothing to build
}

TEST_CASE("CONFIG SET: a TLS context that cannot be built changes nothing") {
  Harness h;
  std::vector<std::pair<std::string, bool>> calls;
  h.server().set_tls_apply([&](const TlsConfig& tls, bool reload) {
    calls.emplace_back(tls.cert_file, reload);
    if (tls.port == 1) return TlsApplyResult::kListenFailed;
    return tls.cert_file != "/bad" ? TlsApplyResult::kOk : TlsApplyResult::kContextFailed;
  });
  CHECK(h.Cmd("CONFIG SET tls-cert-file /good") == Ok());
  CHECK(h.Cmd("CONFIG SET timeout 5 tls-cert-file /bad") ==
        Err("ERR CONFIG SET failed (possibly related to argument 'tls-cert-file') - Unable to "
            "update TLS configuration. Check server logs."));
  CHECK(h.Cmd("CONFIG GET tls-cert-file") == Arr({Bulk("tls-cert-file"), Bulk("/good")}));
  CHECK(h.Cmd("CONFIG GET timeout") == Arr({Bulk("timeout"), Bulk("0")}));
  // tls-auth-clients is taken without a reload; the others reload.
  CHECK(h.Cmd("CONFIG SET tls-auth-clients no") == Ok());
  REQUIRE(calls.size() == 3);
  CHECK(calls[0] == std::make_pair(std::string("/good"), true));
  CHECK(calls[1] == std::make_pair(std::string("/bad"), true));
  CHECK(calls[2] == std::make_pair(std::string("/good"), false));
  CHECK(h.Cmd("CONFIG SET maxclients 100") == Ok());
  CHECK(calls.size() == 3);  // no tls-* option: no call
  CHECK(h.Cmd("CONFIG SET tls-port 1") ==
        Err("ERR CONFIG SET failed (possibly related to argument 'tls-port') - Unable to listen "
            "on this port. Check server logs."));
  CHECK(h.Cmd("CONFIG GET tls-port") == Arr({Bulk("tls-port"), Bulk("0")}));
  h.server().set_tls_apply(nullptr);
}

TEST_CASE("TlsContexts refuses what cannot be a context, and keeps the current one") {
  std::string error;
  TlsConfig tls;
  tls.port = 6380;
  CHECK(TlsContexts::Build(tls, &error) == nullptr);
  CHECK(error == "No tls-cert-file configured!");
  tls.cert_file = "/nonexistent/s.crt";
  CHECK(TlsContexts::Build(tls, &error) == nullptr);
  CHECK(error == "No tls-key-file configured!");
  tls.key_file = "/nonexistent/s.key";
  CHECK(TlsContexts::Build(tls, &error) == nullptr);
  CHECK(error.rfind("Either tls-ca-cert-file or tls-ca-cert-dir must be specified", 0) == 0);
  tls.auth_clients = TlsAuthClients::kNo;
  tls.protocols = "TLSv1.4";
  CHECK(TlsContexts::Build(tls, &error) == nullptr);
  CHECK(error.rfind("Invalid tls-protocols specified.", 0) == 0);
  tls.protocols = "tlsv1.3";
  CHECK(TlsContexts::Build(tls, &error) == nullptr);
  CHECK(error.rfind("Failed to load certificate: /nonexistent/s.crt: error:", 0) == 0);

  TlsContexts contexts;
  TlsConfig off;  // no TLS wanted: nothing built, tls-auth-clients taken
  off.auth_clients = TlsAuthClients::kOptional;
  CHECK(contexts.Apply(off, true));
  CHECK(contexts.Current() == nullptr);
  CHECK(contexts.auth_clients() == TlsAuthClients::kOptional);
  CHECK(!contexts.Apply(tls, true));  // refused: nothing changes
  CHECK(contexts.auth_clients() == TlsAuthClients::kOptional);
}

}  // namespace sluice::server::testing
