// The real Server and Connection over TCP on 127.0.0.1 (an ephemeral port): pipelining,
// commands split across reads, protocol errors, QUIT, maxclients, CLIENT KILL, the
// unauthenticated limits, the idle timeout, large values and SHUTDOWN. Reads use a generous
// socket timeout so a broken server fails the test instead of hanging it.
#include <doctest/doctest.h>
#include <sys/socket.h>

#include <asio.hpp>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "server/command.h"
#include "server/server.h"
#include "server/server_state.h"
#include "sluice/store.h"
#include "tests/server/harness.h"

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

class Client {
 public:
  explicit Client(int port) : socket_(io_) {
    socket_.connect({asio::ip::make_address("127.0.0.1"), static_cast<uint16_t>(port)});
    timeval tv{20, 0};  // generous: only a broken server hits it
    setsockopt(socket_.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  }
  void Send(std::string_view bytes) { asio::write(socket_, asio::buffer(bytes)); }
  // Reads exactly n bytes (fewer if the server closes first).
  std::string Read(size_t n) {
    std::string out(n, '\0');
    std::error_code ec;
    size_t got = asio::read(socket_, asio::buffer(out), ec);
    out.resize(got);
    return out;
  }
  std::string Roundtrip(std::string_view request, size_t reply_len) {
    Send(request);
    return Read(reply_len);
  }
  // True when the server closed the connection (EOF) rather than the read timing out.
  bool ClosedByServer() {
    char c;
    std::error_code ec;
    size_t n = socket_.read_some(asio::buffer(&c, 1), ec);
    return n == 0 && (ec == asio::error::eof || ec == asio::error::connection_reset);
  }

 private:
  asio::io_context io_;
  asio::ip::tcp::socket socket_;
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

TEST_CASE("a command split across reads") {
  LiveServer server;
  Client c(server.port());
  c.Send("*2\r\n$4\r\nEC");
  c.Send("HO\r\n$5\r\nhel");
  CHECK(Expect(c, "lo\r\n", Bulk("hello")) == Bulk("hello"));
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

}  // namespace sluice::server::testing
