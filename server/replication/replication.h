// Room server/replication: replication on Redis's own protocol (PSYNC, a replication ID and byte
// offset, a backlog, RDB full sync), so replicas (Sluice's or a real redis-server) follow a
// Sluice primary and Redis Sentinel fails over between Sluice nodes. Sees server/core, the public
// storage headers and storage/formats; server/commands drives it (cmd_replication.cc) and
// main.cc attaches it.
//
// The stream (docs/replication.md). Every committed top-level unit (a command, EXEC, a script)
// appends its *effect* to the backlog, in commit order: the dispatcher calls Capture before the
// unit commits (its key locks held), Capture stages the effect per thread, and the store's commit
// observer (OnCommit) appends what was staged once the write is applied, still under the unit's
// locks, so per key the stream's order is the commit order. The effect of a unit:
//   - a deterministic command (SET k v, HSET, LPUSH, DEL, INCR, ...): its argv as given;
//   - EXPIRE and its family: PEXPIREAT / PERSIST with the absolute time the unit set;
//   - FLUSHDB, FLUSHALL, SWAPDB: their argv;
//   - anything else (limiter takes, SET EX, INCRBYFLOAT, SPOP, blocking pops, scripts, EXEC...):
//     the state of every key it wrote: `RESTORE key <abs-ms|0> <DUMP payload> REPLACE ABSTTL`
//     for Redis's types, `SLUICE.SETENTRY key kind <abs-ms|0> payload` for Sluice's limiter
//     states (no Redis form), `DEL key` for a key the unit removed;
//   - more than one command: wrapped in MULTI ... EXEC; SELECT whenever the db changes.
// Keys the primary removes as expired (the expiry cycle, or a read) go out as DEL (OnExpired,
// before the OnCommit of the same unit). A replica applies the stream through the dispatcher as
// its master client and appends the bytes it applied to its own backlog unchanged, so its offset
// is the primary's and its own replicas (or its siblings, after a promotion) continue from it.
//
// Thread-safety: every public method may be called from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "protocol/reply_writer.h"
#include "server/core/client_state.h"
#include "server/core/replication_hook.h"
#include "server/core/server_state.h"
#include "server/replication/backlog.h"
#include "sluice/store.h"

namespace sluice::server::replication {

class MasterLink;  // replica_link.cc

// One replica connected to this primary (a connection that sent PSYNC or SYNC).
struct ReplicaEntry {
  ClientState* client = nullptr;  // valid until the registry's remove listener drops the entry
  uint64_t id = 0;
  std::string ip;
  int port = 0;
  enum class State { kWaitBgsave, kOnline } state = State::kWaitBgsave;
  std::string held;  // stream bytes appended while its RDB is made (sent after it)
  int64_t ack_offset = 0;
  int64_t ack_ms = 0;  // real ms of its last REPLCONF ACK
};

class Replication final : public ReplicationHook, public CommitObserver {
 public:
  Replication(Store& store, ServerState& server);
  ~Replication() override;
  Replication(const Replication&) = delete;
  Replication& operator=(const Replication&) = delete;

  // Attaches the hook, the commit observer and the client-removal listener, starts the cron
  // thread, and connects to config's replicaof when set. Once, before serving.
  void Start();
  // Stops the link and the threads (before the store closes).
  void Stop();
  // CONFIG SET changed the configuration: re-reads the replication options.
  void ReloadConfig();

  // ---- ReplicationHook / CommitObserver (propagate.cc)
  void Capture(CommandContext& ctx, Store::Transaction& unit, const CommandSpec& spec,
               Args args) override;
  void DropCaptured() override;
  void Step(CommandContext& ctx, Store::Transaction& unit, const CommandSpec& spec,
            Args args) override;
  void AbandonSteps() override;
  Status Admit(const CommandContext& ctx, const CommandSpec& spec) override;
  Status AdmitWrite(const CommandContext& ctx) override;
  void OnCommit(std::span<const KeyRef> written, uint32_t flushed_dbs) override;
  void OnExpired(std::span<const KeyRef> expired) override;
  int64_t TakeWrittenOffset() override;
  void WhenAcked(int64_t offset, std::function<void()> done) override;

  // ---- The primary's side (primary.cc)
  // REPLCONF listening-port / ip-address before PSYNC.
  void Announce(ClientState& client, int port, std::string ip);
  // PSYNC replid offset (SYNC: replid "?", offset -1, no +FULLRESYNC line). Replies through
  // the client's outbox: +CONTINUE and the backlog from `offset`, or +FULLRESYNC, then the RDB
  // (made in the background) and the stream from the snapshot's offset.
  void Psync(ClientState& client, std::string_view replid, int64_t offset, bool sync_command);
  // REPLCONF ACK offset from a replica.
  void Ack(ClientState& client, int64_t offset);
  // WAIT: how many replicas acknowledged `offset` by now (asks them with GETACK first when
  // `ask`).
  int64_t CountAcked(int64_t offset);
  void RequestAcks();
  // The offset of the stream this thread's client has written up to (WAIT's target).
  int64_t offset();

  // ---- The replica's side (replica_link.cc)
  // REPLICAOF host port: "+OK", or "+OK Already connected to specified master" (*already).
  Status ReplicaOf(const std::string& host, int port, bool* already);
  // REPLICAOF NO ONE: becomes a primary (a new replication ID; the old one as replid2).
  void PromoteToPrimary();
  bool is_replica() const { return is_replica_.load(std::memory_order_acquire); }
  // Redis's data_age (cluster elections, cluster-replica-validity-factor): ms since the last
  // read from the primary while the link is up, since the link went down otherwise; 0 when
  // this node is not a replica.
  int64_t MasterDataAgeMs();

  // ---- Coordinated failover (failover.cc), Redis 7.0's FAILOVER: writes pause, the target
  // (or the first replica) acknowledges the whole stream, then this primary becomes its replica
  // with `PSYNC <replid> <offset> FAILOVER`, which promotes it (it continues our history), and
  // writes resume (answered -READONLY here from then on).
  struct FailoverRequest {
    bool abort = false;
    bool has_target = false;
    std::string host;
    int port = 0;
    bool force = false;
    int64_t timeout_ms = 0;  // 0: no timeout
  };
  // FAILOVER's checks in Redis's order and its errors; Ok when a failover started or aborted.
  Status Failover(const FailoverRequest& request);
  bool failing_over();
  // PSYNC ... FAILOVER received by a replica: promotes it when `replid` is its own.
  Status AcceptFailover(std::string_view replid);

  // ---- What users see (info.cc)
  std::string InfoSection();  // INFO replication, Redis 7.0.15's fields in order
  void RoleReply(protocol::ReplyWriter& out);
  int64_t sync_full() const { return sync_full_.load(); }
  int64_t sync_partial_ok() const { return sync_partial_ok_.load(); }
  int64_t sync_partial_err() const { return sync_partial_err_.load(); }
  std::string replid();
  // The config's replicaof ("host port" or "") for CONFIG REWRITE.
  std::string ReplicaOfLine();

  // Function libraries (main.cc: the scripting room's registry): every library's code for a
  // full sync, and on a replica the libraries a full sync brought (replacing its own).
  void SetFunctionLibraries(std::function<std::vector<std::string>()> codes,
                            std::function<Status(const std::vector<std::string>&)> install) {
    function_codes_ = std::move(codes);
    install_functions_ = std::move(install);
  }
  // A command that changed no key but must reach the replicas as given (FUNCTION LOAD, DELETE,
  // FLUSH, RESTORE): appended to the stream now (no SELECT). Nothing on a replica.
  void PropagateAsGiven(Args args);
  // Commands appended together (MULTI ... EXEC around them when more than one).
  void PropagateCommands(const std::vector<std::vector<std::string>>& commands);

  // ---- Used by the link (replica_link.cc) and full sync (full_sync.cc)
  Store& store() { return store_; }
  ServerState& server() { return server_; }
  // A replica appends the bytes its master client applied (already counted by the primary).
  void AppendProxied(std::string_view bytes);
  // After loading a full sync: the primary's ID and offset become ours; the backlog restarts.
  void AdoptPrimary(const std::string& replid, int64_t offset);
  // The replica's PSYNC arguments: our ID and offset + 1 ("?" -1 when never synced).
  void PsyncArgs(std::string* replid, int64_t* offset);
  void NoteMasterLink(bool up);
  // +CONTINUE <id>: a primary with a new ID (promoted since): ours becomes replid2.
  void ContinueWith(const std::string& new_id);
  // Beyond Redis: replica lag in ms (the replica: since it last applied the primary's stream;
  // the primary: its slowest online replica's time since its last ACK).
  int64_t LagMs();

 private:
  friend class MasterLink;
  void EnsureBacklogLocked();
  void AppendLocked(std::string_view bytes);          // backlog + every replica
  void EmitLocked(int db, std::string_view command);  // SELECT when needed, then command
  void CronLoop();
  void StartFullSync(ReplicaEntry& entry);  // full_sync.cc
  void FinishFullSync(uint64_t id, std::string rdb, int64_t offset, bool sync_command);
  void RemoveReplica(ClientState* client);
  void WakeWaiters();  // parked WAITs run again
  void RefreshConfigLocked();
  void UpdateFailover();  // the cron, every 100 ms (failover.cc)
  void ClearFailoverLocked();
  void AbortFailover(const std::string& why);
  const char* FailoverStateNameLocked() const;

  Store& store_;
  ServerState& server_;
  std::function<std::vector<std::string>()> function_codes_;  // set before Start
  std::function<Status(const std::vector<std::string>&)> install_functions_;
  std::mutex mu_;
  std::unique_ptr<Backlog> backlog_;  // guarded by mu_
  int last_db_ = -1;                  // the db the stream last SELECTed
  std::string replid_;
  std::string replid2_ = std::string(40, '0');
  int64_t second_offset_ = -1;
  std::vector<std::unique_ptr<ReplicaEntry>> replicas_;
  std::map<uint64_t, std::pair<int, std::string>> announced_;  // client id -> (port, ip)
  int64_t no_replicas_since_ms_ = 0;
  OutputBufferLimit replica_limit_;       // client-output-buffer-limit replica (ReloadConfig)
  std::atomic<bool> propagating_{false};  // a backlog exists and this node is a primary
  std::atomic<bool> is_replica_{false};
  std::atomic<bool> link_up_{false};
  std::atomic<int64_t> good_replicas_{0};
  // Cached options (ReloadConfig).
  std::atomic<bool> read_only_{true};
  std::atomic<bool> serve_stale_{true};
  std::atomic<int64_t> min_replicas_{0};
  std::atomic<int64_t> min_lag_s_{10};
  std::atomic<int64_t> ack_writes_{0};  // replica-ack-writes
  std::atomic<int64_t> ack_timeout_ms_{1000};
  struct AckWaiter {
    int64_t offset;
    int64_t deadline_ms;
    std::function<void()> done;
  };
  std::vector<AckWaiter> ack_waiters_;  // guarded by mu_
  // Calls the waiters whose offset enough replicas acknowledged (or whose time is up). mu_ held;
  // moves them to *ready (called after unlocking).
  void TakeReadyWaitersLocked(int64_t now_ms, std::vector<std::function<void()>>* ready);
  std::atomic<int64_t> sync_full_{0}, sync_partial_ok_{0}, sync_partial_err_{0};
  std::unique_ptr<MasterLink> link_;  // guarded by mu_ (replaced under it)
  // FAILOVER (guarded by mu_; the link reads psync_failover_ and reports the target's answer).
  enum class FailoverState { kNone, kWaitForSync, kInProgress } failover_ = FailoverState::kNone;
  std::string failover_host_;
  int failover_port_ = 0;
  int64_t failover_end_ms_ = 0;
  bool failover_force_ = false;
  std::atomic<bool> psync_failover_{false};
  // The link's PSYNC FAILOVER: 1 accepted (+CONTINUE / +FULLRESYNC), -1 refused, 0 no answer.
  std::atomic<int> failover_answer_{0};
  // Full-sync threads (with their done flags), joined when done and by Stop.
  std::vector<std::pair<std::thread, std::shared_ptr<std::atomic<bool>>>> syncs_;
  // When the stream reached each offset (at most one sample per ms, the last ~10 s): the lag
  // of a replica is the age of the oldest write it has not acknowledged (INFO, beyond Redis).
  std::deque<std::pair<int64_t, int64_t>> offset_times_;  // (offset, real ms), guarded by mu_
  std::thread cron_;
  std::mutex cron_mu_;
  std::condition_variable cron_cv_;
  bool stopping_ = false;
};

// The process's Replication (main.cc sets it before serving; nullptr in harnesses without one).
void SetInstance(Replication* repl);
Replication* Instance();
// INFO server's run_id: 40 random hex characters, fixed for the process's life.
const std::string& RunId();

// The key WAIT parks on (never a user's: it starts with a NUL byte); ACKs wake it.
inline constexpr std::string_view kWaitKey("\0sluice:wait", 12);

// Redis's RESP encoding of a command (an array of bulk strings).
void AppendCommand(std::initializer_list<std::string_view> args, std::string* out);
void AppendCommandArgs(Args args, std::string* out);
// A random 40-character hex replication ID.
std::string RandomReplId();

}  // namespace sluice::server::replication
