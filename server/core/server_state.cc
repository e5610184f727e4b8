#include "server/core/server_state.h"

#include <cstdlib>
#include <utility>

#include "server/core/command.h"
#include "server/core/command_latency.h"
#include "server/core/notify.h"

namespace sluice::server {

void ServerStats::Reset() {
  total_connections_received.store(0, std::memory_order_relaxed);
  total_commands_processed.store(0, std::memory_order_relaxed);
  rejected_connections.store(0, std::memory_order_relaxed);
  total_net_input_bytes.store(0, std::memory_order_relaxed);
  total_net_output_bytes.store(0, std::memory_order_relaxed);
  total_error_replies.store(0, std::memory_order_relaxed);
  client_output_buffer_limit_disconnections.store(0, std::memory_order_relaxed);
  client_query_buffer_limit_disconnections.store(0, std::memory_order_relaxed);
}

void ClientRegistry::Add(ClientState* client, KillFn kill) {
  std::lock_guard lock(mu_);
  clients_[client->id] = Entry{client, std::move(kill)};
}

void ClientRegistry::Remove(ClientState* client) {
  {
    std::lock_guard lock(mu_);
    clients_.erase(client->id);
  }
  if (on_remove_) on_remove_(client);
}

size_t ClientRegistry::size() const {
  std::lock_guard lock(mu_);
  return clients_.size();
}

void ClientRegistry::ForEachLocked(const std::function<void(Entry&)>& fn) {
  std::lock_guard lock(mu_);
  for (auto& [id, entry] : clients_) fn(entry);
}

bool ClientRegistry::WithClient(uint64_t id, const std::function<void(ClientState&)>& fn) {
  std::lock_guard lock(mu_);
  auto it = clients_.find(id);
  if (it == clients_.end()) return false;
  fn(*it->second.client);
  return true;
}

ServerState::ServerState(Config config, std::shared_ptr<AdjustableClock> clock)
    : clock_(std::move(clock)) {
  tracking_.Attach(this);
  set_config(config);
}

Config ServerState::config() const {
  std::lock_guard lock(config_mu_);
  return config_;
}

void ServerState::set_config(const Config& config) {
  std::lock_guard lock(config_mu_);
  config_ = config;
  PublishLocked();
}

bool ServerState::UpdateConfig(const std::function<bool(Config&)>& edit) {
  std::lock_guard lock(config_mu_);
  Config updated = config_;
  if (!edit(updated)) return false;
  config_ = std::move(updated);
  PublishLocked();
  return true;
}

void ServerState::PublishLocked() {
  if (config_.requirepass != published_requirepass_) {
    // Redis's ACLUpdateDefaultUserPassword: requirepass replaces the default user's passwords.
    acl_.SetDefaultPassword(config_.requirepass);
    published_requirepass_ = config_.requirepass;
  }
  maxclients_.store(config_.maxclients, std::memory_order_relaxed);
  timeout_s_.store(config_.timeout, std::memory_order_relaxed);
  max_bulk_len_.store(config_.proto_max_bulk_len, std::memory_order_relaxed);
  debug_enabled_.store(config_.enable_debug_command, std::memory_order_relaxed);
  protected_mode_.store(config_.protected_mode, std::memory_order_relaxed);
  const OutputBufferLimit& normal = config_.client_output_buffer_limit[kObufNormal];
  obuf_hard_.store(normal.hard, std::memory_order_relaxed);
  obuf_soft_.store(normal.soft, std::memory_order_relaxed);
  obuf_soft_seconds_.store(normal.soft_seconds, std::memory_order_relaxed);
  const OutputBufferLimit& pubsub = config_.client_output_buffer_limit[kObufPubsub];
  obuf_pubsub_hard_.store(pubsub.hard, std::memory_order_relaxed);
  obuf_pubsub_soft_.store(pubsub.soft, std::memory_order_relaxed);
  obuf_pubsub_soft_seconds_.store(pubsub.soft_seconds, std::memory_order_relaxed);
  query_limit_.store(config_.client_query_buffer_limit, std::memory_order_relaxed);
  busy_threshold_ms_.store(config_.busy_reply_threshold_ms, std::memory_order_relaxed);
  native_scripts_.store(config_.native_scripts, std::memory_order_relaxed);
  SetNotifyFlags(config_.notify_keyspace_events);
  slowlog_slower_than_.store(config_.slowlog_log_slower_than, std::memory_order_relaxed);
  slowlog_max_len_.store(config_.slowlog_max_len, std::memory_order_relaxed);
  latency_threshold_ms_.store(config_.latency_monitor_threshold, std::memory_order_relaxed);
  auto compat = [&](const char* name, int64_t fallback) {
    auto it = config_.compat.find(name);
    return it == config_.compat.end() ? fallback : std::strtoll(it->second.c_str(), nullptr, 10);
  };
  {
    auto it = config_.compat.find("latency-tracking");
    SetLatencyTracking(it == config_.compat.end() || it->second != "no");
  }
  stream_node_max_entries_.store(compat("stream-node-max-entries", 100), std::memory_order_relaxed);
  tracking_.set_max_keys(config_.tracking_table_max_keys);
}

int64_t ServerState::PausedUntil(uint32_t command_flags) const {
  const int64_t until = pause_until_ms_.load(std::memory_order_acquire);
  if (until == 0) return 0;
  // Redis's WRITE pause holds its write and may-replicate commands: PUBLISH, SPUBLISH, PFCOUNT,
  // EVAL, EVALSHA and FCALL (not their _RO forms; the caller marks a script whose flags say
  // no-writes kReadOnly).
  const bool may_write = (command_flags & (kWrite | kWritesLibraries | kMayReplicate)) != 0 ||
                         ((command_flags & kScriptUnit) != 0 && (command_flags & kReadOnly) == 0);
  const bool waits = pause_all_.load(std::memory_order_relaxed) || may_write;
  if (!waits || RealNowMs() >= until) return 0;
  return until;
}

int64_t ServerState::uptime_seconds() const {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() -
                                                          started_)
      .count();
}

int64_t ServerState::RealNowMs() { return WallClock().NowMs(); }

void ServerState::set_shutdown_hook(std::function<void()> hook) {
  std::lock_guard lock(shutdown_mu_);
  shutdown_hook_ = std::move(hook);
}

void ServerState::RequestShutdown(bool abandon_busy_script) {
  if (abandon_busy_script) shutdown_abandons_busy_script_.store(true, std::memory_order_release);
  shutdown_requested_.store(true, std::memory_order_release);
  std::function<void()> hook;
  {
    std::lock_guard lock(shutdown_mu_);
    hook = shutdown_hook_;
  }
  if (hook) hook();
}

}  // namespace sluice::server
