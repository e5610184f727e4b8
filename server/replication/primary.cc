// The primary's side: the backlog and the replicas it feeds, PSYNC (partial or full), ACKs,
// WAIT's counts, and the cron thread (PINGs in the stream, replica timeouts, the backlog's TTL,
// min-replicas-to-write's count).
#include <chrono>
#include <cstdint>
#include <random>
#include <string>

#include "server/core/logging.h"
#include "server/replication/replica_link.h"
#include "server/replication/replication.h"

namespace sluice::server::replication {

std::string RandomReplId() {
  static const char* hex = "0123456789abcdef";
  std::random_device rd;
  std::mt19937_64 gen((static_cast<uint64_t>(rd()) << 32) ^ rd() ^
                      static_cast<uint64_t>(ServerState::RealNowMs()));
  std::string id(40, '0');
  for (char& c : id) c = hex[gen() & 15];
  return id;
}

namespace {
std::atomic<Replication*> g_instance{nullptr};
}  // namespace

void SetInstance(Replication* repl) { g_instance.store(repl); }
Replication* Instance() { return g_instance.load(); }
const std::string& RunId() {
  static const std::string id = RandomReplId();
  return id;
}

Replication::Replication(Store& store, ServerState& server)
    : store_(store), server_(server), replid_(RandomReplId()) {}

Replication::~Replication() { Stop(); }

void Replication::Start() {
  ReloadConfig();
  server_.clients().set_remove_listener([this](ClientState* c) { RemoveReplica(c); });
  store_.AddCommitObserver(this);
  SetReplicationHook(this);
  cron_ = std::thread([this] { CronLoop(); });
  const std::string line = server_.config().replicaof;
  if (!line.empty()) {
    const size_t space = line.find(' ');
    bool already = false;
    ReplicaOf(line.substr(0, space), std::stoi(line.substr(space + 1)), &already);
  }
}

void Replication::Stop() {
  {
    std::lock_guard lock(cron_mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  cron_cv_.notify_all();
  if (cron_.joinable()) cron_.join();
  std::unique_ptr<MasterLink> link;
  {
    std::lock_guard lock(mu_);
    link = std::move(link_);
  }
  link.reset();  // joins its thread
  std::vector<std::thread> syncs;
  {
    std::lock_guard lock(mu_);
    for (auto& [t, done] : syncs_) syncs.push_back(std::move(t));
    syncs_.clear();
  }
  for (std::thread& t : syncs) {
    if (t.joinable()) t.join();
  }
  SetReplicationHook(nullptr);
}

void Replication::ReloadConfig() {
  const Config c = server_.config();
  read_only_.store(c.replica_read_only);
  serve_stale_.store(c.replica_serve_stale_data);
  if (c.min_replicas_to_write > 0) Engage();  // Admit's -NOREPLICAS
  min_replicas_.store(c.min_replicas_to_write);
  min_lag_s_.store(c.min_replicas_max_lag);
  ack_writes_.store(c.replica_ack_writes);
  ack_timeout_ms_.store(c.replica_ack_timeout_ms);
  std::lock_guard lock(mu_);
  replica_limit_ = c.client_output_buffer_limit[kObufReplica];
  if (backlog_ != nullptr) backlog_->Resize(static_cast<size_t>(c.repl_backlog_size));
}

void Replication::EnsureBacklogLocked() {
  if (backlog_ != nullptr) return;
  backlog_ = std::make_unique<Backlog>(static_cast<size_t>(server_.config().repl_backlog_size));
  backlog_->Reset(0);
  last_db_ = -1;
  Engage();  // before propagating: the gate then calls Capture
  if (!is_replica_.load()) propagating_.store(true, std::memory_order_release);
}

void Replication::AppendLocked(std::string_view bytes) {
  backlog_->Append(bytes);
  if (!replicas_.empty()) {
    const int64_t now = ServerState::RealNowMs();
    if (offset_times_.empty() || offset_times_.back().second != now) {
      offset_times_.emplace_back(backlog_->offset(), now);
    } else {
      offset_times_.back().first = backlog_->offset();
    }
    while (offset_times_.size() > 10000) offset_times_.pop_front();
  }
  const OutputBufferLimit limit = replica_limit_;
  for (auto& r : replicas_) {
    if (r->state == ReplicaEntry::State::kOnline) {
      r->client->outbox.PushEncoded(bytes, limit);
    } else {
      r->held.append(bytes);
    }
  }
}

void Replication::AppendProxied(std::string_view bytes) {
  std::lock_guard lock(mu_);
  EnsureBacklogLocked();
  AppendLocked(bytes);
}

void Replication::Announce(ClientState& client, int port, std::string ip) {
  std::lock_guard lock(mu_);
  auto& a = announced_[client.id];
  if (port >= 0) a.first = port;
  if (!ip.empty()) a.second = std::move(ip);
}

void Replication::Psync(ClientState& client, std::string_view replid, int64_t offset,
                        bool sync_command) {
  std::unique_lock lock(mu_);
  EnsureBacklogLocked();
  auto entry = std::make_unique<ReplicaEntry>();
  entry->client = &client;
  entry->id = client.id;
  entry->ip = client.addr.substr(0, client.addr.rfind(':'));
  if (auto it = announced_.find(client.id); it != announced_.end()) {
    entry->port = it->second.first;
    if (!it->second.second.empty()) entry->ip = it->second.second;
  }
  entry->ack_ms = ServerState::RealNowMs();
  client.repl_kind.store(ClientState::kReplicaLink, std::memory_order_release);
  const bool id_matches = replid == replid_ || (replid == replid2_ && offset <= second_offset_);
  const OutputBufferLimit limit = replica_limit_;
  if (!sync_command && id_matches && backlog_->Holds(offset)) {
    std::string out = "+CONTINUE " + replid_ + "\r\n";
    backlog_->CopyFrom(offset, &out);
    client.outbox.PushEncoded(out, limit);
    entry->state = ReplicaEntry::State::kOnline;
    entry->ack_offset = offset - 1;
    sync_partial_ok_.fetch_add(1);
    LogInfo("Partial resynchronization request from " + client.addr + " accepted, offset " +
            std::to_string(offset));
    replicas_.push_back(std::move(entry));
    return;
  }
  if (!sync_command && replid != "?") sync_partial_err_.fetch_add(1);
  sync_full_.fetch_add(1);
  ReplicaEntry& e = *entry;
  replicas_.push_back(std::move(entry));
  LogInfo("Full resync requested by replica " + client.addr);
  lock.unlock();
  StartFullSync(e);
  static_cast<void>(sync_command);
}

void Replication::Ack(ClientState& client, int64_t offset) {
  std::vector<std::function<void()>> ready;
  {
    std::lock_guard lock(mu_);
    for (auto& r : replicas_) {
      if (r->id == client.id) {
        r->ack_offset = std::max(r->ack_offset, offset);
        r->ack_ms = ServerState::RealNowMs();
      }
    }
    if (!ack_waiters_.empty()) TakeReadyWaitersLocked(0, &ready);
  }
  for (auto& fn : ready) fn();
  WakeWaiters();
}

void Replication::WakeWaiters() {
  if (server_.blocking().blocked_clients() == 0) return;
  KeyRef keys[kNumDatabases];
  for (int db = 0; db < kNumDatabases; ++db) keys[db] = KeyRef{db, kWaitKey};
  server_.blocking().OnCommit(keys, 0);
}

int64_t Replication::CountAcked(int64_t offset) {
  std::lock_guard lock(mu_);
  int64_t n = 0;
  for (auto& r : replicas_) {
    if (r->state == ReplicaEntry::State::kOnline && r->ack_offset >= offset) ++n;
  }
  return n;
}

void Replication::RequestAcks() {
  std::lock_guard lock(mu_);
  if (backlog_ == nullptr || is_replica_.load() || replicas_.empty()) return;
  std::string getack;
  AppendCommand({"REPLCONF", "GETACK", "*"}, &getack);
  AppendLocked(getack);
}

int64_t Replication::offset() {
  std::lock_guard lock(mu_);
  return backlog_ == nullptr ? 0 : backlog_->offset();
}

std::string Replication::replid() {
  std::lock_guard lock(mu_);
  return replid_;
}

void Replication::RemoveReplica(ClientState* client) {
  std::lock_guard lock(mu_);
  announced_.erase(client->id);
  for (size_t i = 0; i < replicas_.size(); ++i) {
    if (replicas_[i]->client == client) {
      LogInfo("Connection with replica " + client->addr + " lost.");
      replicas_.erase(replicas_.begin() + static_cast<std::ptrdiff_t>(i));
      if (replicas_.empty()) no_replicas_since_ms_ = ServerState::RealNowMs();
      return;
    }
  }
}

void Replication::CronLoop() {
  int64_t last_ping_ms = ServerState::RealNowMs();
  for (;;) {
    {
      std::unique_lock lock(cron_mu_);
      cron_cv_.wait_for(lock, std::chrono::milliseconds(100), [this] { return stopping_; });
      if (stopping_) return;
    }
    const Config c = server_.config();
    const int64_t now = ServerState::RealNowMs();
    std::vector<uint64_t> timed_out;
    std::vector<std::function<void()>> ready;
    {
      std::lock_guard lock(mu_);
      // Shutting down: held replies go now, while the I/O threads still run.
      if (!ack_waiters_.empty()) {
        TakeReadyWaitersLocked(server_.shutdown_requested() ? INT64_MAX : now, &ready);
      }
      int64_t good = 0;
      for (auto& r : replicas_) {
        if (r->state != ReplicaEntry::State::kOnline) continue;
        if (now - r->ack_ms <= c.min_replicas_max_lag * 1000) ++good;
        if (now - r->ack_ms > c.repl_timeout * 1000) timed_out.push_back(r->id);
      }
      good_replicas_.store(good);
      // No PING while a failover waits: the replicas' ACKs must reach the stream's end.
      if (!is_replica_.load() && backlog_ != nullptr && !replicas_.empty() &&
          failover_ == FailoverState::kNone &&
          now - last_ping_ms >= c.repl_ping_replica_period * 1000) {
        std::string ping;
        AppendCommand({"PING"}, &ping);
        AppendLocked(ping);
        last_ping_ms = now;
      }
      if (!is_replica_.load() && backlog_ != nullptr && replicas_.empty() &&
          c.repl_backlog_ttl > 0 && no_replicas_since_ms_ > 0 &&
          now - no_replicas_since_ms_ > c.repl_backlog_ttl * 1000) {
        // As Redis: the backlog goes, and with it any later partial resync of this history.
        propagating_.store(false);
        backlog_.reset();
        replid_ = RandomReplId();
        replid2_ = std::string(40, '0');
        second_offset_ = -1;
      }
    }
    for (auto& fn : ready) fn();  // replica-ack-writes' timeouts
    WakeWaiters();                // WAIT's deadlines
    UpdateFailover();
    if (!timed_out.empty()) {
      server_.clients().ForEachLocked([&](ClientRegistry::Entry& e) {
        for (uint64_t id : timed_out) {
          if (e.client->id == id && e.kill) {
            LogInfo("Disconnecting timedout replica " + e.client->addr);
            e.kill();
          }
        }
      });
    }
  }
}

}  // namespace sluice::server::replication
