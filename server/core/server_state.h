// ServerState: what every connection shares. The live configuration, the stats counters behind
// INFO, the client registry behind CLIENT LIST/KILL, the AdjustableClock shared with the Store
// (DEBUG CLOCK), the limiter counters, the command table (COMMAND) and the shutdown request.
// Thread-safe: every method may be called from any I/O thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "server/core/acl_registry.h"
#include "server/core/blocking.h"
#include "server/core/client_state.h"
#include "server/core/cluster_router.h"
#include "server/core/config.h"
#include "server/core/dirty_counter.h"
#include "server/core/latency.h"
#include "server/core/limiter_stats.h"
#include "server/core/monitors.h"
#include "server/core/pubsub_hub.h"
#include "server/core/running_scripts.h"
#include "server/core/saves.h"
#include "server/core/slowlog.h"
#include "server/core/stat_counter.h"
#include "server/core/tracking.h"
#include "server/core/watch.h"
#include "sluice/clock.h"

namespace sluice::server {

class CommandTable;
struct ScriptingState;  // server/scripting/scripting_state.h

// Counters for INFO stats (StatCounter: per-thread cache lines, relaxed).
struct ServerStats {
  StatCounter total_connections_received;
  StatCounter total_commands_processed;
  StatCounter rejected_connections;
  StatCounter total_net_input_bytes;
  StatCounter total_net_output_bytes;
  StatCounter total_error_replies;
  StatCounter client_output_buffer_limit_disconnections;
  StatCounter client_query_buffer_limit_disconnections;
  void Reset();  // CONFIG RESETSTAT
};

// The connected clients. Its mutex guards the fields of every registered ClientState that other
// threads read (name, lib_name, lib_ver, db, resp; last_command and last_interaction_ms are
// atomics instead, written on every command without this lock): the
// owning connection writes them only while holding mutex(), and readers (CLIENT LIST) hold it
// too. Ids are unique for the life of the process and start at 1.
class ClientRegistry {
 public:
  // Called with the registry lock held, from any thread: must only post work to the client's
  // own thread (close its socket), never take the registry lock.
  using KillFn = std::function<void()>;
  struct Entry {
    ClientState* client;
    KillFn kill;  // may be empty (tests): then only kill_requested is set
  };

  uint64_t NextId() { return next_id_.fetch_add(1, std::memory_order_relaxed); }
  // `client` must stay valid until Remove(client). Not owned.
  void Add(ClientState* client, KillFn kill);
  void Remove(ClientState* client);
  size_t size() const;
  std::mutex& mutex() const { return mu_; }
  // Calls fn for each client in id order with mutex() held. fn must not call back into the
  // registry.
  void ForEachLocked(const std::function<void(Entry&)>& fn);
  // Calls fn with the client `id` and mutex() held; false (fn not called) when no such client.
  // fn must not call back into the registry.
  bool WithClient(uint64_t id, const std::function<void(ClientState&)>& fn);
  // Told of every Remove (on the removing thread, without the registry lock, before the client
  // is destroyed): replication forgets a replica's link there. Set once before serving.
  void set_remove_listener(std::function<void(ClientState*)> fn) { on_remove_ = std::move(fn); }

 private:
  mutable std::mutex mu_;
  std::map<uint64_t, Entry> clients_;
  std::atomic<uint64_t> next_id_{1};
  std::function<void(ClientState*)> on_remove_;
};

class ServerState {
 public:
  ServerState(Config config, std::shared_ptr<AdjustableClock> clock);

  // A copy of the current configuration (CONFIG GET, INFO).
  Config config() const;
  // Replaces the configuration (startup, tests). Not for CONFIG SET: see UpdateConfig.
  void set_config(const Config& config);
  // CONFIG SET's atomic read-modify-write: calls edit(copy of the configuration) with the
  // configuration lock held; when edit returns true the copy becomes the configuration, else
  // nothing changes. edit may also apply the change's side effects (the Store's durability) so
  // that they happen in the same order as the configuration changes. Concurrent updates never
  // undo each other. edit must not call back into the configuration methods.
  bool UpdateConfig(const std::function<bool(Config&)>& edit);
  // Lock-free reads of the live values checked on every command or read.
  // True while a new connection must authenticate: the default user has a password
  // (requirepass, or ACL SETUSER default) or is off.
  bool requirepass_set() const { return acl_.auth_required(); }
  int64_t maxclients() const { return maxclients_.load(std::memory_order_relaxed); }
  int64_t timeout_seconds() const { return timeout_s_.load(std::memory_order_relaxed); }
  int64_t proto_max_bulk_len() const { return max_bulk_len_.load(std::memory_order_relaxed); }
  bool debug_enabled() const { return debug_enabled_.load(std::memory_order_relaxed); }
  bool protected_mode() const { return protected_mode_.load(std::memory_order_relaxed); }
  // client-output-buffer-limit's normal class (the one Sluice's clients belong to).
  OutputBufferLimit output_buffer_limit() const {
    return {obuf_hard_.load(std::memory_order_relaxed), obuf_soft_.load(std::memory_order_relaxed),
            obuf_soft_seconds_.load(std::memory_order_relaxed)};
  }
  // client-output-buffer-limit's pubsub class (clients subscribed to anything).
  OutputBufferLimit pubsub_output_buffer_limit() const {
    return {obuf_pubsub_hard_.load(std::memory_order_relaxed),
            obuf_pubsub_soft_.load(std::memory_order_relaxed),
            obuf_pubsub_soft_seconds_.load(std::memory_order_relaxed)};
  }
  int64_t query_buffer_limit() const { return query_limit_.load(std::memory_order_relaxed); }
  int64_t busy_reply_threshold_ms() const {
    return busy_threshold_ms_.load(std::memory_order_relaxed);
  }
  bool native_scripts_enabled() const { return native_scripts_.load(std::memory_order_relaxed); }

  AdjustableClock& clock() { return *clock_; }
  const std::shared_ptr<AdjustableClock>& shared_clock() const { return clock_; }
  ServerStats& stats() { return stats_; }
  ClientRegistry& clients() { return clients_; }
  // ACL users and log; requirepass is the default user's password.
  AclRegistry& acl() { return acl_; }
  // The ACL file (aclfile), "" when none. Set once by main before serving.
  void set_acl_file(std::string path) { acl_file_ = std::move(path); }
  const std::string& acl_file() const { return acl_file_; }
  LimiterStats& limiter_stats() { return limiter_stats_; }
  // WATCH: register it with the Store as a commit observer before serving.
  WatchRegistry& watches() { return watches_; }
  // Blocked clients (BLPOP...): register it with the Store as a commit observer before serving.
  BlockingRegistry& blocking() { return blocking_; }
  // Client-side caching (CLIENT TRACKING): register it with the Store as a commit observer
  // before serving.
  TrackingRegistry& tracking() { return tracking_; }
  // The scripts and functions running now (the dispatcher's -BUSY check, SCRIPT KILL).
  RunningScripts& running_scripts() { return running_scripts_; }
  // The scripting room's shared state (script cache, function libraries, native script stats),
  // attached once before serving by AttachScripting (server/scripting/scripting_state.h): the
  // server core holds it without depending on the scripting room.
  ScriptingState& scripting() { return *scripting_; }
  void attach_scripting(std::shared_ptr<ScriptingState> scripting) {
    scripting_ = std::move(scripting);
  }

  // Clients in MONITOR mode; the dispatcher feeds them every command.
  MonitorRegistry& monitors() { return monitors_; }
  // Pub/sub's registry (server/pubsub), attached once before serving by AttachPubSub; nullptr
  // when none is attached.
  PubSubHub* pubsub() const { return pubsub_.get(); }
  void attach_pubsub(std::shared_ptr<PubSubHub> hub) { pubsub_ = std::move(hub); }
  // Cluster mode's slot map (server/cluster), attached once before serving when
  // cluster-enabled is yes; nullptr in standalone mode.
  ClusterRouter* cluster() const { return cluster_.get(); }
  void attach_cluster(std::shared_ptr<ClusterRouter> router) { cluster_ = std::move(router); }

  // TLS (server/net/tls_context.h), set once by the Server before serving: checks `tls` and,
  // when it needs a TLS context and `reload` is set (CONFIG SET of a file or context option),
  // builds one from the files for new TLS connections (existing ones keep theirs), and moves the
  // TLS listener when tls.port changed; on failure (the reason logged) the old context and
  // listener stay. Without a hook every value is taken.
  using TlsApplyFn = std::function<TlsApplyResult(const TlsConfig& tls, bool reload)>;
  void set_tls_apply(TlsApplyFn fn) { tls_apply_ = std::move(fn); }
  TlsApplyResult ApplyTls(const TlsConfig& tls, bool reload) const {
    return tls_apply_ ? tls_apply_(tls, reload) : TlsApplyResult::kOk;
  }

  // The full command table (for COMMAND). Not owned; set once before serving.
  void set_commands(const CommandTable* table) { commands_ = table; }
  const CommandTable& commands() const { return *commands_; }

  // Process facts for INFO server. Set once by main before serving.
  void set_executable(std::string path) { executable_ = std::move(path); }
  const std::string& executable() const { return executable_; }
  void set_tcp_port(int port) { tcp_port_.store(port, std::memory_order_relaxed); }
  int tcp_port() const { return tcp_port_.load(std::memory_order_relaxed); }
  int64_t uptime_seconds() const;
  // LASTSAVE: Unix seconds of the last successful SAVE/BGSAVE, the start time before any (as
  // Redis).
  int64_t last_save_unix() const { return last_save_unix_.load(std::memory_order_relaxed); }
  void set_last_save_unix(int64_t s) { last_save_unix_.store(s, std::memory_order_relaxed); }
  Saves& saves() { return saves_; }  // SAVE, BGSAVE (server/core/saves.h)
  // Writes since the last save: register it with the Store as a commit observer before serving.
  DirtyCounter& dirty() { return dirty_; }
  LatencyMonitor& latency() { return latency_; }  // LATENCY (server/core/latency.h)
  // stream-node-max-entries: XADD/XTRIM's default LIMIT for `~` is 100 nodes of it, as Redis
  // (Sluice's nodes themselves keep Redis's default size).
  int64_t stream_node_max_entries() const {
    return stream_node_max_entries_.load(std::memory_order_relaxed);
  }
  int64_t latency_threshold_ms() const {
    return latency_threshold_ms_.load(std::memory_order_relaxed);
  }
  SlowLog& slowlog() { return slowlog_; }  // SLOWLOG (server/core/slowlog.h)
  int64_t slowlog_slower_than_us() const {
    return slowlog_slower_than_.load(std::memory_order_relaxed);
  }
  int64_t slowlog_max_len() const { return slowlog_max_len_.load(std::memory_order_relaxed); }

  // CLIENT PAUSE: until `until_ms` (real ms since the epoch), every command (`all`) or those
  // that write wait; a new pause replaces the last (as Redis). CLIENT UNPAUSE ends it.
  void Pause(int64_t until_ms, bool all) {
    pause_all_.store(all, std::memory_order_relaxed);
    pause_until_ms_.store(until_ms, std::memory_order_release);
    if (pause_listener_) pause_listener_(true);
  }
  void Unpause() {
    pause_until_ms_.store(0, std::memory_order_release);
    if (pause_listener_) pause_listener_(false);
  }
  // Told of every Pause (true) and Unpause (false), under pause_purposes.cc's lock; the server
  // holds the store's expiry while paused (Store::set_keep_expired_paused). A pause that runs
  // out is lifted by RefreshPauses, which the server's control thread calls every second. Set
  // once before serving.
  void set_pause_listener(std::function<void(bool paused)> listener) {
    pause_listener_ = std::move(listener);
  }
  // Real ms until which a command with these flags (CommandFlag) must wait; 0 when it may run.
  int64_t PausedUntil(uint32_t command_flags) const;
  // False when no pause is set (PausedUntil is then 0 for every command): one load.
  bool MaybePaused() const { return pause_until_ms_.load(std::memory_order_acquire) != 0; }
  // Clients whose next command a pause holds (Redis counts them in INFO's blocked_clients):
  // each connection adds itself once when held and takes itself away when released or closed.
  void CountHeldByPause(int delta) { held_by_pause_.fetch_add(delta, std::memory_order_relaxed); }
  int64_t held_by_pause() const { return held_by_pause_.load(std::memory_order_relaxed); }
  // Real wall-clock ms since the epoch, never the DEBUG CLOCK: client age/idle and timeouts.
  static int64_t RealNowMs();

  // SHUTDOWN / signals: the hook (set by the Server) stops it asynchronously. Idempotent.
  // abandon_busy_script (SHUTDOWN NOSAVE while a script is busy): a busy script that has written
  // and so cannot be stopped does not hold the exit back; its writes are never committed.
  void set_shutdown_hook(std::function<void()> hook);
  void RequestShutdown(bool abandon_busy_script = false);
  bool shutdown_requested() const { return shutdown_requested_.load(std::memory_order_acquire); }
  bool shutdown_abandons_busy_script() const {
    return shutdown_abandons_busy_script_.load(std::memory_order_acquire);
  }

 private:
  void PublishLocked();  // copies config_'s live values to the atomics below

  mutable std::mutex config_mu_;
  Config config_;
  std::string published_requirepass_;  // the requirepass last given to acl_
  std::atomic<int64_t> maxclients_{0};
  std::atomic<int64_t> timeout_s_{0};
  std::atomic<int64_t> max_bulk_len_{0};
  std::atomic<bool> debug_enabled_{false};
  std::atomic<bool> protected_mode_{true};
  std::atomic<int64_t> obuf_hard_{0};
  std::atomic<int64_t> obuf_soft_{0};
  std::atomic<int64_t> obuf_soft_seconds_{0};
  std::atomic<int64_t> obuf_pubsub_hard_{0};
  std::atomic<int64_t> obuf_pubsub_soft_{0};
  std::atomic<int64_t> obuf_pubsub_soft_seconds_{0};
  std::atomic<int64_t> query_limit_{0};
  std::atomic<int64_t> busy_threshold_ms_{5000};
  std::atomic<bool> native_scripts_{true};

  std::shared_ptr<AdjustableClock> clock_;
  ServerStats stats_;
  ClientRegistry clients_;
  AclRegistry acl_;
  std::string acl_file_;
  LimiterStats limiter_stats_;
  WatchRegistry watches_;
  BlockingRegistry blocking_;
  TrackingRegistry tracking_;
  MonitorRegistry monitors_;
  RunningScripts running_scripts_;
  std::shared_ptr<ScriptingState> scripting_;
  std::shared_ptr<PubSubHub> pubsub_;
  std::shared_ptr<ClusterRouter> cluster_;
  TlsApplyFn tls_apply_;
  const CommandTable* commands_ = nullptr;
  std::string executable_;
  std::atomic<int> tcp_port_{0};
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::atomic<int64_t> last_save_unix_{RealNowMs() / 1000};
  Saves saves_;
  DirtyCounter dirty_;
  LatencyMonitor latency_;
  std::atomic<int64_t> latency_threshold_ms_{0};
  std::atomic<int64_t> stream_node_max_entries_{100};
  SlowLog slowlog_;
  std::atomic<int64_t> held_by_pause_{0};
  std::atomic<int64_t> slowlog_slower_than_{10000};
  std::atomic<int64_t> slowlog_max_len_{128};
  std::atomic<int64_t> pause_until_ms_{0};
  std::atomic<bool> pause_all_{false};
  std::function<void(bool)> pause_listener_;

  std::mutex shutdown_mu_;
  std::function<void()> shutdown_hook_;
  std::atomic<bool> shutdown_requested_{false};
  std::atomic<bool> shutdown_abandons_busy_script_{false};
};

}  // namespace sluice::server
