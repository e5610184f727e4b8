// What users and Sentinel see: INFO replication (Redis 7.0.15's fields, order and format, then
// Sluice's lag fields) and ROLE.
#include <string>

#include "server/replication/replica_link.h"
#include "server/replication/replication.h"

namespace sluice::server::replication {

namespace {
void Field(std::string* out, const char* name, const std::string& value) {
  out->append(name);
  out->push_back(':');
  out->append(value);
  out->append("\r\n");
}
void Field(std::string* out, const char* name, int64_t value) {
  Field(out, name, std::to_string(value));
}
}  // namespace

int64_t Replication::MasterDataAgeMs() {
  const int64_t now = ServerState::RealNowMs();
  std::lock_guard lock(mu_);
  if (!is_replica_.load() || link_ == nullptr) return 0;
  if (link_->up()) return now - link_->last_io_ms();
  const int64_t since = link_->down_since_ms();
  return since > 0 ? now - since : 0;
}

int64_t Replication::LagMs() {
  const int64_t now = ServerState::RealNowMs();
  std::lock_guard lock(mu_);
  if (is_replica_.load()) {
    return link_ != nullptr && link_->up() ? now - link_->last_apply_ms() : -1;
  }
  // The age of the oldest write some online replica has not acknowledged yet.
  int64_t min_acked = -1;
  for (auto& r : replicas_) {
    if (r->state != ReplicaEntry::State::kOnline) continue;
    if (min_acked < 0 || r->ack_offset < min_acked) min_acked = r->ack_offset;
  }
  while (!offset_times_.empty() && offset_times_.front().first <= min_acked) {
    offset_times_.pop_front();
  }
  if (min_acked < 0 || offset_times_.empty()) return 0;
  return now - offset_times_.front().second;
}

std::string Replication::InfoSection() {
  const Config c = server_.config();
  const int64_t now = ServerState::RealNowMs();
  const int64_t lag_ms = LagMs();
  std::lock_guard lock(mu_);
  std::string out = "# Replication\r\n";
  const bool replica = is_replica_.load();
  Field(&out, "role", replica ? "slave" : "master");
  const int64_t offset = backlog_ != nullptr ? backlog_->offset() : 0;
  if (replica && link_ != nullptr) {
    const bool up = link_->up();
    Field(&out, "master_host", link_->host());
    Field(&out, "master_port", link_->port());
    Field(&out, "master_link_status", up ? "up" : "down");
    Field(&out, "master_last_io_seconds_ago", up ? (now - link_->last_io_ms()) / 1000 : -1);
    Field(&out, "master_sync_in_progress", link_->syncing() ? 1 : 0);
    Field(&out, "slave_read_repl_offset", up ? link_->read_offset() : offset);
    Field(&out, "slave_repl_offset", offset);
    if (!up) {
      const int64_t since = link_->down_since_ms();
      Field(&out, "master_link_down_since_seconds", since > 0 ? (now - since) / 1000 : -1);
    }
    Field(&out, "slave_priority", c.replica_priority);
    Field(&out, "slave_read_only", c.replica_read_only ? 1 : 0);
    Field(&out, "replica_announced", c.replica_announced ? 1 : 0);
  }
  Field(&out, "connected_slaves", static_cast<int64_t>(replicas_.size()));
  if (c.min_replicas_to_write > 0 && c.min_replicas_max_lag > 0) {
    Field(&out, "min_slaves_good_slaves", good_replicas_.load());
  }
  int n = 0;
  for (auto& r : replicas_) {
    const bool online = r->state == ReplicaEntry::State::kOnline;
    out += "slave" + std::to_string(n++) + ":ip=" + r->ip + ",port=" + std::to_string(r->port) +
           ",state=" + (online ? "online" : "wait_bgsave") +
           ",offset=" + std::to_string(r->ack_offset) +
           ",lag=" + std::to_string(online ? (now - r->ack_ms) / 1000 : 0) + "\r\n";
  }
  Field(&out, "master_failover_state", FailoverStateNameLocked());
  Field(&out, "master_replid", replid_);
  Field(&out, "master_replid2", replid2_);
  Field(&out, "master_repl_offset", offset);
  Field(&out, "second_repl_offset", second_offset_);
  Field(&out, "repl_backlog_active", backlog_ != nullptr ? 1 : 0);
  Field(&out, "repl_backlog_size", c.repl_backlog_size);
  Field(&out, "repl_backlog_first_byte_offset", backlog_ != nullptr ? backlog_->first_offset() : 0);
  Field(&out, "repl_backlog_histlen", backlog_ != nullptr ? backlog_->histlen() : 0);
  // Beyond Redis.
  Field(&out, "sluice_repl_lag_ms", lag_ms);
  return out;
}

void Replication::RoleReply(protocol::ReplyWriter& out) {
  std::lock_guard lock(mu_);
  const int64_t offset = backlog_ != nullptr ? backlog_->offset() : 0;
  if (!is_replica_.load() || link_ == nullptr) {
    out.Array(3);
    out.Bulk("master");
    out.Integer(offset);
    size_t online = 0;
    for (auto& r : replicas_) online += r->state == ReplicaEntry::State::kOnline;
    out.Array(online);
    for (auto& r : replicas_) {
      if (r->state != ReplicaEntry::State::kOnline) continue;
      out.Array(3);
      out.Bulk(r->ip);
      out.Bulk(std::to_string(r->port));
      out.Bulk(std::to_string(r->ack_offset));
    }
    return;
  }
  out.Array(5);
  out.Bulk("slave");
  out.Bulk(link_->host());
  out.Integer(link_->port());
  out.Bulk(link_->up() ? "connected" : (link_->syncing() ? "sync" : "connecting"));
  out.Integer(link_->up() ? offset : -1);
}

}  // namespace sluice::server::replication
