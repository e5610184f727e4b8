// The real Server and Connection over TCP on 127.0.0.1 (an ephemeral port): pipelining,
// commands split across reads, the reply-bounded batch, client-output-buffer-limit, protocol
// errors, QUIT, maxclients, CLIENT KILL, the unauthenticated limits, the idle timeout, large
// values and SHUTDOWN. Reads use a generous read deadline so a broken server fails the test
// instead of hanging it.
#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "server/commands/commands.h"
#include "server/core/command.h"
#include "server/core/server_state.h"
#include "server/net/server.h"
#include "server/pubsub/pubsub_registry.h"
#include "server/scripting/lua_sha1.h"
#include "server/scripting/scripting_state.h"
#include "sluice/store.h"
#include "tests/server/harness.h"
#include "tests/server/script_bodies.h"

namespace sluice::server::testing {

namespace {

// A server on its own thread, data in a fresh temp dir.
class LiveServer {
 public:
  explicit LiveServer(Config config = {}) : dir_(MakeTempDir()) {
    config.port = 0;
    config.bind = {"127.0.0.1"};
    config.threads = 2;
    config.dir = dir_;
    auto clock = std::make_shared<AdjustableClock>();
    Options options;
    options.path = dir_ + "/db";
    options.clock = clock;
    auto opened = Store::Open(options);
    REQUIRE(opened.ok());
    store_ = std::move(opened).value();
    state_ = std::make_unique<ServerState>(config, clock);
    AttachScripting(*state_);
    AttachPubSub(*state_);
    RegisterAllCommands(table_);
    state_->set_commands(&table_);
    server_ = std::make_unique<Server>(*store_, *state_, table_);
    REQUIRE(server_->Listen().ok());
    thread_ = std::thread([this] { server_->Run(); });
  }
  ~LiveServer() {
    server_->Stop();
    thread_.join();
    server_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  int port() const { return server_->bound_port(); }
  ServerState& state() { return *state_; }
  // Waits for Run() to return (after SHUTDOWN).
  void Join() {
    thread_.join();
    thread_ = std::thread([] {});
  }

 private:
  std::string dir_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<ServerState> state_;
  CommandTable table_;
  std::unique_ptr<Server> server_;
  std::thread thread_;
};

// A blocking test client on plain POSIX sockets. Every read waits at most kReadTimeoutMs (with
// poll), so a broken server fails the test instead of hanging it. (asio's synchronous reads
// ignore SO_RCVTIMEO and would wait forever.)
class Client {
 public:
  static constexpr int kReadTimeoutMs = 20000;  // generous: only a broken server hits it

  explicit Client(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    REQUIRE(fd_ >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  }
  ~Client() { ::close(fd_); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  void Send(std::string_view bytes) {
    while (!bytes.empty()) {
      ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      REQUIRE(n > 0);
      bytes.remove_prefix(static_cast<size_t>(n));
    }
  }
  // Reads exactly n bytes (fewer if the server closes first or the read times out).
  std::string Read(size_t n) {
    std::string out;
    char buf[64 * 1024];
    while (out.size() < n) {
      ssize_t got = ReadSome(buf, std::min(sizeof(buf), n - out.size()));
      if (got <= 0) break;
      out.append(buf, static_cast<size_t>(got));
    }
    return out;
  }
  std::string Roundtrip(std::string_view request, size_t reply_len) {
    Send(request);
    return Read(reply_len);
  }
  // True when the server closed the connection (EOF or reset) rather than the read timing out.
  bool ClosedByServer() {
    char c;
    errno = 0;
    ssize_t n = ReadSome(&c, 1);
    return n == 0 || (n < 0 && errno == ECONNRESET);
  }

 private:
  // recv after waiting for data; -1 with errno ETIMEDOUT when nothing came in time.
  ssize_t ReadSome(char* buf, size_t len) {
    pollfd p{fd_, POLLIN, 0};
    int ready = ::poll(&p, 1, kReadTimeoutMs);
    if (ready <= 0) {
      errno = ETIMEDOUT;
      return -1;
    }
    return ::recv(fd_, buf, len, 0);
  }

  int fd_;
};

std::string Expect(Client& c, std::string_view request, const std::string& reply) {
  return c.Roundtrip(request, reply.size());
}

}  // namespace

TEST_CASE("pipelined commands are answered in order") {
  LiveServer server;
  Client c(server.port());
  std::string want = Simple("PONG") + Ok() + Bulk("1") + Int(2) + Int(1);
  CHECK(Expect(c, "PING\r\n*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n1\r\nGET a\r\nINCR a\r\nDBSIZE\r\n",
               want) == want);
}

TEST_CASE("pipelined recognised scripts between plain commands are answered in order") {
  // ulule/limiter's incr (server/scripting/native/library_scripts/): native calls in the
  // connection's read batch, members of its commit group with the plain commands around them.
  const std::string body = Body("ulule-limiter_incr.lua");
  const std::string sha = Sha1Hex(body);
  Config config;
  config.enable_debug_command = true;
  LiveServer server(config);
  Client c(server.port());
  CHECK(Expect(c, "DEBUG CLOCK SET 1700000000000\r\n", Ok()) == Ok());  // PTTLs exact
  const std::string load = "*3\r\n$6\r\nSCRIPT\r\n$4\r\nLOAD\r\n$" + std::to_string(body.size()) +
                           "\r\n" + body + "\r\n";
  CHECK(Expect(c, load, Bulk(sha)) == Bulk(sha));
  auto incr = [&](const std::string& key) {
    return "EVALSHA " + sha + " 1 " + key + " 1 1000\r\n";
  };
  const std::string request = "SET a 5\r\n" + incr("a") + "GET a\r\n" + incr("b") + incr("b") +
                              "PTTL b\r\nINCR b\r\n" + incr("b");
  const std::string want = Ok() + Arr({Int(6), Int(-1)}) + Bulk("6") + Arr({Int(1), Int(1000)}) +
                           Arr({Int(2), Int(1000)}) + Int(1000) + Int(3) + Arr({Int(4), Int(1000)});
  CHECK(Expect(c, request, want) == want);
}

TEST_CASE("a command split across reads") {
  LiveServer server;
  Client c(server.port());
  c.Send("*2\r\n$4\r\nEC");
  c.Send("HO\r\n$5\r\nhel");
  CHECK(Expect(c, "lo\r\n", Bulk("hello")) == Bulk("hello"));
}

TEST_CASE("a command split across reads, then more commands in its last read") {
  // The look-ahead parses the completed command again from its start, and the command loop
  // takes that parse: it must drop its own partial one, or a command it parses itself next (one
  // with more arguments than the look-ahead keeps) is misread.
  LiveServer server;
  Client c(server.port());
  // The pauses make separate reads likely (not required: the replies are the same either way).
  c.Send("*2\r\n$4\r\nEC");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  c.Send("HO\r\n$5\r\nhel");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::string rpush = "*65\r\n$5\r\nRPUSH\r\n$1\r\nl\r\n";
  for (int i = 0; i < 63; ++i) rpush += "$1\r\nx\r\n";
  const std::string want = Bulk("hello") + Int(63) + Simple("PONG");
  CHECK(Expect(c, "lo\r\n" + rpush + "PING\r\n", want) == want);
}

TEST_CASE("a large value crosses many reads") {
  LiveServer server;
  Client c(server.port());
  std::string value(3 * 1024 * 1024 + 7, 'v');
  std::string set =
      "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$" + std::to_string(value.size()) + "\r\n" + value + "\r\n";
  CHECK(Expect(c, set, Ok()) == Ok());
  CHECK(Expect(c, "GET k\r\n", Bulk(value)) == Bulk(value));
}

TEST_CASE("pipelined replies past the batch bound resume after they are written, in order") {
  // 40 GETs of 100 KB in one write: the batch stops at Connection::kBatchReplyBytes and the
  // remaining commands run once its replies are written; every reply arrives, in order.
  LiveServer server;
  Client c(server.port());
  std::string value(100 * 1000, 'v');
  std::string set =
      "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$" + std::to_string(value.size()) + "\r\n" + value + "\r\n";
  CHECK(Expect(c, set, Ok()) == Ok());
  std::string request;
  std::string want;
  for (int i = 0; i < 40; ++i) {
    request += "GET k\r\nINCR n\r\n";
    want += Bulk(value) + Int(i + 1);
  }
  CHECK(Expect(c, request, want) == want);
}

TEST_CASE("client-output-buffer-limit: over the hard limit the client is closed") {
  LiveServer server;
  Client c(server.port());
  std::string value(2 * 1000 * 1000, 'v');
  std::string set =
      "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$" + std::to_string(value.size()) + "\r\n" + value + "\r\n";
  CHECK(Expect(c, set, Ok()) == Ok());
  std::string config =
      "*4\r\n$6\r\nCONFIG\r\n$3\r\nSET\r\n$26\r\nclient-output-buffer-limit\r\n$14\r\nnormal 1mb 0 "
      "0\r\n";
  CHECK(Expect(c, config, Ok()) == Ok());
  c.Send("GET k\r\n");
  CHECK(c.ClosedByServer());
  CHECK(server.state().stats().client_output_buffer_limit_disconnections.load() == 1);
  Client other(server.port());
  CHECK(Expect(other, "PING\r\n", Simple("PONG")) == Simple("PONG"));
}

TEST_CASE("protocol error: reply then close") {
  LiveServer server;
  Client c(server.port());
  std::string want = Simple("PONG") + Err("ERR Protocol error: invalid bulk length");
  CHECK(Expect(c, "PING\r\n*1\r\n$x\r\n", want) == want);
  CHECK(c.ClosedByServer());
}

TEST_CASE("QUIT replies OK and closes; later commands of the batch are not run") {
  LiveServer server;
  Client c(server.port());
  CHECK(Expect(c, "QUIT\r\nSET after 1\r\n", Ok()) == Ok());
  CHECK(c.ClosedByServer());
  Client d(server.port());
  CHECK(Expect(d, "EXISTS after\r\n", Int(0)) == Int(0));
}

TEST_CASE("maxclients rejects the extra client with Redis's error") {
  LiveServer server;
  Client a(server.port());
  CHECK(Expect(a, "CONFIG SET maxclients 1\r\n", Ok()) == Ok());
  Client b(server.port());
  std::string want = Err("ERR max number of clients reached");
  CHECK(b.Read(want.size()) == want);
  CHECK(b.ClosedByServer());
  CHECK(Expect(a, "PING\r\n", Simple("PONG")) == Simple("PONG"));
}

TEST_CASE("CLIENT KILL closes the other connection") {
  LiveServer server;
  Client a(server.port());
  Client b(server.port());
  std::string id_reply = b.Roundtrip("CLIENT ID\r\n", 4);  // ":N\r\n" with a one-digit id
  REQUIRE(id_reply.size() == 4);
  std::string id = id_reply.substr(1, 1);
  CHECK(Expect(a, "CLIENT KILL ID " + id + "\r\n", Int(1)) == Int(1));
  CHECK(b.ClosedByServer());
}

TEST_CASE("requirepass: NOAUTH, the unauthenticated parser limits, then AUTH") {
  Config config;
  config.requirepass = "pw";
  LiveServer server(config);
  Client a(server.port());
  std::string noauth = Err("NOAUTH Authentication required.");
  CHECK(Expect(a, "GET k\r\n", noauth) == noauth);
  CHECK(Expect(a, "AUTH pw\r\nGET k\r\n", Ok() + Nil()) == Ok() + Nil());
  Client b(server.port());
  std::string too_many = Err("ERR Protocol error: unauthenticated multibulk length");
  CHECK(Expect(b, "*11\r\n", too_many) == too_many);
  CHECK(b.ClosedByServer());
}

TEST_CASE("requirepass: AUTH lifts the parser limits from the next pipelined command on") {
  Config config;
  config.requirepass = "pw";
  LiveServer server(config);
  Client a(server.port());
  // Eleven arguments and a 16385-byte bulk, both over the unauthenticated limits, in the same
  // write as the AUTH that lifts them.
  std::string eleven = "*11\r\n$5\r\nRPUSH\r\n$1\r\nl\r\n";
  for (int i = 0; i < 9; ++i) eleven += "$1\r\n" + std::to_string(i) + "\r\n";
  const std::string big(16385, 'b');
  const std::string set = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$16385\r\n" + big + "\r\n";
  const std::string want = Ok() + Int(9) + Ok() + Int(16385);
  CHECK(Expect(a, "AUTH pw\r\n" + eleven + set + "STRLEN k\r\n", want) == want);
}

TEST_CASE("idle clients are closed after timeout seconds") {
  Config config;
  config.timeout = 1;
  LiveServer server(config);
  Client c(server.port());
  CHECK(Expect(c, "PING\r\n", Simple("PONG")) == Simple("PONG"));
  CHECK(c.ClosedByServer());  // within the sweep period after 1 s idle; read timeout is 20 s
}

TEST_CASE("SHUTDOWN stops the server after closing its clients") {
  auto server = std::make_unique<LiveServer>();
  Client a(server->port());
  Client b(server->port());
  CHECK(Expect(b, "SET k v\r\n", Ok()) == Ok());
  a.Send("SHUTDOWN\r\n");
  CHECK(a.ClosedByServer());
  CHECK(b.ClosedByServer());
  server->Join();
  CHECK(server->state().shutdown_requested());
}

// For the sanitizer sweep (tools/sanitize.sh tsan): the fields CLIENT LIST reads from other
// threads, CLIENT KILL, CONFIG SET, the idle-timeout sweep and shutdown, all at once on several
// I/O threads. Each worker connects up front (no connect can fail after shutdown) and moves to
// its next connection when one is killed; every client only checks it got its replies.
TEST_CASE("CLIENT LIST/KILL/SETNAME, CONFIG SET, idle sweep and shutdown race cleanly") {
  Config config;
  config.timeout = 1;
  auto server = std::make_unique<LiveServer>(config);
  const int port = server->port();
  Client idle(port);  // closed by the idle sweep meanwhile
  CHECK(Expect(idle, "CLIENT SETNAME idle\r\n", Ok()) == Ok());
  constexpr int kWorkers = 4, kConnectionsEach = 6;
  std::vector<std::vector<std::unique_ptr<Client>>> clients(kWorkers);
  for (auto& own : clients) {
    for (int i = 0; i < kConnectionsEach; ++i) own.push_back(std::make_unique<Client>(port));
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < kWorkers; ++t) {
    threads.emplace_back([&, t] {
      const std::string name = "w" + std::to_string(t);
      for (auto& c : clients[t]) {
        for (int i = 0;; ++i) {  // until this connection is killed or the server stops
          // Every 10th round kills one of the workers' connections (maybe this one).
          std::string kill =
              i % 10 == 9
                  ? "CLIENT KILL ID " +
                        std::to_string(2 + (i / 10 * 7 + t) % (kWorkers * kConnectionsEach)) +
                        "\r\n"
                  : "";
          c->Send("CLIENT SETNAME " + name + "\r\nSELECT " + std::to_string(i % 16) + "\r\nHELLO " +
                  std::to_string(2 + i % 2) +
                  "\r\nCLIENT LIST\r\nCLIENT INFO\r\nCONFIG SET maxclients " +
                  std::to_string(1000 + i % 100) + "\r\n" + kill + "INFO clients\r\nSET k" + name +
                  " v\r\nPING\r\n");
          std::string got;
          while (got.find("+PONG\r\n") == std::string::npos) {
            std::string more = c->Read(1);
            if (more.empty()) break;
            got += more;
          }
          if (got.find("+PONG\r\n") == std::string::npos) break;
        }
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  server->state().RequestShutdown();  // as SIGTERM or SHUTDOWN would, with clients busy
  server->Join();
  for (std::thread& t : threads) t.join();
  CHECK(server->state().shutdown_requested());
  CHECK(idle.ClosedByServer());
}

}  // namespace sluice::server::testing
