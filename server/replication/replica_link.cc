#include "server/replication/replica_link.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "protocol/request_parser.h"
#include "server/core/args.h"
#include "server/core/config_compat.h"
#include "server/core/dispatcher.h"
#include "server/core/loading_state.h"
#include "server/core/logging.h"
#include "server/replication/apply_prefetch.h"
#include "server/replication/full_sync.h"
#include "server/replication/link_io.h"
#include "server/replication/replication.h"

namespace sluice::server::replication {

namespace {

int Connect(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res) != 0) return -1;
  int fd = -1;
  for (addrinfo* a = res; a != nullptr; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0) continue;
    if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
      // The ACKs are small writes that replica-ack-writes waits for: no Nagle delay on them
      // (the primary's side of a link is an ordinary connection, already TCP_NODELAY).
      const int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      break;
    }
    close(fd);
    fd = -1;
  }
  freeaddrinfo(res);
  return fd;
}

// Buffered reads with a deadline.
class Reader {
 public:
  explicit Reader(LinkIo& io) : io_(io) {}
  // Reads more bytes (waiting up to timeout_ms); false on EOF, error (closed()) or timeout.
  bool Fill(int timeout_ms) {
    const LinkIo::ReadResult r = io_.Read(&buf_, timeout_ms);
    closed_ = r == LinkIo::ReadResult::kClosed;
    return r == LinkIo::ReadResult::kData;
  }
  bool closed() const { return closed_; }
  bool Line(std::string* line, int timeout_ms) {
    for (;;) {
      const size_t nl = buf_.find('\n', pos_);
      if (nl != std::string::npos) {
        size_t end = nl;
        if (end > pos_ && buf_[end - 1] == '\r') --end;
        line->assign(buf_, pos_, end - pos_);
        pos_ = nl + 1;
        Compact();
        return true;
      }
      if (!Fill(timeout_ms)) return false;
    }
  }
  bool Exact(size_t n, std::string* out, int timeout_ms) {
    while (buf_.size() - pos_ < n) {
      if (!Fill(timeout_ms)) return false;
    }
    out->assign(buf_, pos_, n);
    pos_ += n;
    Compact();
    return true;
  }
  std::string& buffer() { return buf_; }
  size_t& pos() { return pos_; }
  void Compact() {
    if (pos_ > 0 && pos_ >= buf_.size() / 2) {
      buf_.erase(0, pos_);
      pos_ = 0;
    }
  }

 private:
  LinkIo& io_;
  std::string buf_;
  size_t pos_ = 0;
  bool closed_ = false;
};

std::string Command(std::initializer_list<std::string_view> args) {
  std::string out;
  AppendCommand(args, &out);
  return out;
}

}  // namespace

MasterLink::MasterLink(Replication& repl, std::string host, int port)
    : repl_(repl), host_(std::move(host)), port_(port) {
  ServerState& server = repl_.server();
  client_.id = server.clients().NextId();
  client_.addr = host_ + ":" + std::to_string(port_);
  client_.created_ms = ServerState::RealNowMs();
  client_.last_interaction_ms.store(client_.created_ms);
  client_.authenticated = true;
  client_.repl_kind.store(ClientState::kMasterLink);
  down_since_ms_.store(ServerState::RealNowMs());
  server.clients().Add(&client_, [this] {
    // CLIENT KILL TYPE master: the link drops and reconnects (as Redis).
    const int fd = fd_.load();
    if (fd >= 0) shutdown(fd, SHUT_RDWR);
  });
  registered_ = true;
  thread_ = std::thread([this] { Run(); });
}

MasterLink::~MasterLink() {
  stop_.store(true);
  const int fd = fd_.load();
  if (fd >= 0) shutdown(fd, SHUT_RDWR);
  if (thread_.joinable()) thread_.join();
  if (registered_) repl_.server().clients().Remove(&client_);
}

void MasterLink::Close() {
  const int fd = fd_.exchange(-1);
  if (fd >= 0) close(fd);
  if (up_.exchange(false)) {
    down_since_ms_.store(ServerState::RealNowMs());
    repl_.NoteMasterLink(false);
  }
  syncing_.store(false);
}

void MasterLink::Run() {
  ServerState& server = repl_.server();
  while (!stop_.load() && !server.shutdown_requested()) {
    if (!Session()) break;
    Close();
    for (int i = 0; i < 10 && !stop_.load(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  Close();
  // Shutting down: the server waits for its registered clients to go.
  if (registered_) {
    server.clients().Remove(&client_);
    registered_ = false;
  }
}

bool MasterLink::Session() {
  const int fd = Connect(host_, port_);
  if (fd < 0) return !stop_.load();
  LinkIo io(fd);  // closes the socket when the session ends
  fd_.store(fd);
  struct Forget {  // before `io` closes it: no shutdown() of a reused descriptor number
    std::atomic<int>& fd;
    ~Forget() { fd.store(-1); }
  } forget{fd_};
  if (stop_.load()) return false;
  LogInfo("MASTER <-> REPLICA sync started with " + host_ + ":" + std::to_string(port_));
  const Config config = repl_.server().config();
  const int timeout_ms = static_cast<int>(config.repl_timeout * 1000);
  if (config.tls.replication) {
    std::string error;
    if (!io.StartTls(config.tls, &error)) {
      LogError("TLS connection to MASTER " + host_ + ":" + std::to_string(port_) +
               " failed: " + error);
      return !stop_.load();
    }
  }
  Reader in(io);
  std::string line;
  auto ask = [&](const std::string& cmd) { return io.SendAll(cmd) && in.Line(&line, timeout_ms); };
  if (!ask(Command({"PING"}))) return true;
  if (!config.masterauth.empty()) {
    const bool ok = config.masteruser.empty()
                        ? ask(Command({"AUTH", config.masterauth}))
                        : ask(Command({"AUTH", config.masteruser, config.masterauth}));
    if (!ok || line != "+OK") {
      LogError("Unable to AUTH to MASTER: " + line);
      return true;
    }
  }
  const int64_t port =
      config.replica_announce_port != 0 ? config.replica_announce_port : repl_.server().tcp_port();
  if (!ask(Command({"REPLCONF", "listening-port", std::to_string(port)}))) return true;
  if (!config.replica_announce_ip.empty() &&
      !ask(Command({"REPLCONF", "ip-address", config.replica_announce_ip}))) {
    return true;
  }
  if (!ask(Command({"REPLCONF", "capa", "eof", "capa", "psync2"}))) return true;
  std::string replid;
  int64_t offset = 0;
  repl_.PsyncArgs(&replid, &offset);
  // A primary handing over (FAILOVER) asks its target to promote itself and continue us.
  const bool failover = repl_.psync_failover_.load();
  const std::string psync = failover
                                ? Command({"PSYNC", replid, std::to_string(offset), "FAILOVER"})
                                : Command({"PSYNC", replid, std::to_string(offset)});
  if (!io.SendAll(psync)) return true;
  do {
    if (!in.Line(&line, timeout_ms)) return true;
  } while (line.empty());
  if (failover) {
    const bool accepted = line.rfind("+FULLRESYNC ", 0) == 0 || line.rfind("+CONTINUE", 0) == 0;
    repl_.failover_answer_.store(accepted ? 1 : -1);
    if (!accepted) return true;
  }
  if (line.rfind("+FULLRESYNC ", 0) == 0) {
    const std::string rest = line.substr(12);
    const size_t space = rest.find(' ');
    const std::string new_id = rest.substr(0, space);
    const int64_t new_offset = std::stoll(rest.substr(space + 1));
    syncing_.store(true);
    // The RDB: "$len\r\n" + bytes, or "$EOF:<40 bytes>\r\n" + bytes + the 40 bytes.
    std::string header;
    do {
      if (!in.Line(&header, timeout_ms)) return true;
    } while (header.empty());
    if (header.empty() || header[0] != '$') return true;
    std::string rdb;
    if (header.rfind("$EOF:", 0) == 0) {
      const std::string mark = header.substr(5);
      for (;;) {
        std::string& b = in.buffer();
        if (b.size() - in.pos() >= mark.size() &&
            b.compare(b.size() - mark.size(), mark.size(), mark) == 0) {
          rdb.assign(b, in.pos(), b.size() - in.pos() - mark.size());
          b.clear();
          in.pos() = 0;
          break;
        }
        if (!in.Fill(timeout_ms)) return true;
      }
    } else {
      const int64_t len = std::stoll(header.substr(1));
      if (len < 0 || !in.Exact(static_cast<size_t>(len), &rdb, timeout_ms)) return true;
    }
    const int64_t start = ServerState::RealNowMs();
    int64_t keys = 0;
    // As a Redis replica does while it loads: a newline to the primary every second, which a
    // redis-server primary takes as the replica's ACK (it drops a replica silent for
    // repl-timeout, and a big RDB loads for longer than that).
    std::atomic<bool> loading{true};
    std::thread keepalive([&loading, &io] {
      for (int tick = 1; loading.load(); ++tick) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        if (tick % 10 == 0 && loading.load()) static_cast<void>(io.SendAll("\n"));
      }
    });
    std::vector<std::string> functions;
    // Clients get -LOADING meanwhile, as from a loading Redis replica (loading_state.h).
    BeginLoading(static_cast<int64_t>(rdb.size()));
    const CompatOption* delay = FindCompatOption("key-load-delay");
    const int64_t delay_us =
        delay == nullptr
            ? 0
            : std::strtoll(GetCompatValue(repl_.server().config(), *delay).c_str(), nullptr, 10);
    Status s = LoadRdb(repl_.store(), rdb, &keys, &functions, delay_us);
    EndLoading();
    loading.store(false);
    keepalive.join();
    if (s.ok() && repl_.install_functions_) s = repl_.install_functions_(functions);
    if (!s.ok()) {
      LogError("Failed trying to load the MASTER synchronization DB: " + s.ToString());
      return true;
    }
    LogInfo("MASTER <-> REPLICA sync: loaded " + std::to_string(keys) + " keys (" +
            std::to_string(rdb.size()) + " bytes) in " +
            std::to_string(ServerState::RealNowMs() - start) + " ms");
    repl_.AdoptPrimary(new_id, new_offset);
    client_.db = 0;
    syncing_.store(false);
  } else if (line.rfind("+CONTINUE", 0) == 0) {
    const std::string new_id = line.size() > 10 ? line.substr(10) : std::string();
    repl_.ContinueWith(new_id);
    LogInfo("Successful partial resynchronization with master.");
  } else {
    LogError("Unexpected reply to PSYNC from master: " + line);
    return true;
  }
  up_.store(true);
  repl_.NoteMasterLink(true);
  last_io_ms_.store(ServerState::RealNowMs());
  last_apply_ms_.store(ServerState::RealNowMs());
  // The stream.
  Store& store = repl_.store();
  ServerState& server = repl_.server();
  const Dispatcher dispatcher(server.commands());
  protocol::RequestParser parser;
  std::string replies;
  ApplyPrefetch prefetch(store, dispatcher);
  int64_t last_ack_ms = 0;
  int64_t applied = repl_.offset();
  read_offset_.store(applied + static_cast<int64_t>(in.buffer().size() - in.pos()));
  for (;;) {
    if (stop_.load() || server.shutdown_requested()) return false;
    bool wrote = false;
    bool getack = false;
    // What one read brought is applied as one RocksDB write where it can (plain data commands
    // join the group, as a primary's I/O round), flushed before the ACK that covers it: the
    // apply rate bounds replica-ack-writes' rate and the replica's lag.
    std::optional<CommitGroup> group;
    // The bytes applied go to our own backlog in one append per read (one lock, not one a
    // command); the buffer is not compacted before that.
    const size_t batch_start = in.pos();
    auto proxy = [&] {
      if (in.pos() > batch_start) {
        repl_.AppendProxied(
            std::string_view(in.buffer()).substr(batch_start, in.pos() - batch_start));
      }
    };
    for (;;) {
      std::string& b = in.buffer();
      size_t consumed = 0;
      const std::string_view data(b.data() + in.pos(), b.size() - in.pos());
      if (data.empty()) break;
      prefetch.Before(b, in.pos(), client_.db);
      const protocol::ParseResult r = parser.Parse(data, &consumed);
      if (r == protocol::ParseResult::kNeedMore) break;
      if (r == protocol::ParseResult::kError) {
        LogError("Protocol error from MASTER: " + parser.error());
        proxy();
        return true;
      }
      Args args = parser.args();
      if (!args.empty()) {
        if (args.size() >= 2 && EqualsIgnoreCase(args[0], "replconf") &&
            EqualsIgnoreCase(args[1], "getack")) {
          getack = true;
        } else {
          replies.clear();
          protocol::ReplyWriter out(&replies, 2);
          CommandContext ctx(store, server, client_, out);
          if (!group) group.emplace(store, /*defer_durability=*/true);
          ctx.group = &*group;
          dispatcher.Dispatch(ctx, args);
          wrote = true;
        }
      }
      applied += static_cast<int64_t>(consumed);
      in.pos() += consumed;
    }
    proxy();
    in.Compact();
    prefetch.Reset();  // positions moved
    if (group) {
      const Status flushed = group->Flush();
      group.reset();
      if (!flushed.ok()) {
        LogError("Applying the MASTER's stream failed: " + flushed.ToString());
        return true;
      }
    }
    if (wrote) {
      static_cast<void>(store.FlushLog());
      last_apply_ms_.store(ServerState::RealNowMs());
    }
    const int64_t now = ServerState::RealNowMs();
    // Besides every second and on GETACK, after each batch that wrote: a Sluice primary with
    // replica-ack-writes holds replies until it hears (Redis primaries take extra ACKs too).
    if (getack || wrote || now - last_ack_ms >= 1000) {
      if (!io.SendAll(Command({"REPLCONF", "ACK", std::to_string(applied)}))) return true;
      last_ack_ms = now;
    }
    const size_t before = in.buffer().size();
    if (!in.Fill(100)) {
      if (in.closed()) return true;  // EOF or error; else no bytes for 100 ms
      if (ServerState::RealNowMs() - last_io_ms_.load() > timeout_ms) {
        LogError("MASTER timeout: no data nor PING received...");
        return true;
      }
      continue;
    }
    last_io_ms_.store(ServerState::RealNowMs());
    read_offset_.fetch_add(static_cast<int64_t>(in.buffer().size() - before));
  }
}

}  // namespace sluice::server::replication
