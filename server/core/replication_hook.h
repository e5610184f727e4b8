// ReplicationHook: the server core's view of replication. server/replication implements it and
// attaches it once before serving (SetReplicationHook); the gate (dispatcher.cc, cmd_multi.cc)
// calls it, so the core never depends on the replication room. With none attached every call
// site costs one relaxed atomic load.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

#include "server/core/command.h"
#include "sluice/status.h"
#include "sluice/transaction.h"

namespace sluice::server {

class ReplicationHook {
 public:
  virtual ~ReplicationHook() = default;
  // Called for a top-level unit (a command, EXEC, a script) after its handler ran and before
  // its commit, with its key locks held: stages the unit's effect for the replication stream
  // on this thread. The store's commit observer appends what was staged once the write is
  // applied, still under the unit's locks (so per key the stream's order is the commit order).
  // `unit` is the unit about to commit (the command's own, or EXEC's).
  virtual void Capture(CommandContext& ctx, Store::Transaction& unit, const CommandSpec& spec,
                       Args args) = 0;
  // The unit's commit failed: drops what Capture staged on this thread.
  virtual void DropCaptured() = 0;
  // The gate's check before a command runs or is queued: -READONLY on a read-only replica,
  // -MASTERDOWN with replica-serve-stale-data no, -NOREPLICAS under min-replicas-to-write.
  virtual Status Admit(const CommandContext& ctx, const CommandSpec& spec) = 0;
  // Beyond Redis (replica-ack-writes N): the stream offset this thread's writes reached since
  // the last call; 0 when none, or when the option is off. The I/O round asks once per round.
  virtual int64_t TakeWrittenOffset() = 0;
  // Calls `done` (on any thread, or at once) when N replicas acknowledged `offset`, or
  // replica-ack-timeout passed: the I/O round holds its replies until then.
  virtual void WhenAcked(int64_t offset, std::function<void()> done) = 0;
};

inline std::atomic<ReplicationHook*> g_replication_hook{nullptr};
inline void SetReplicationHook(ReplicationHook* hook) {
  g_replication_hook.store(hook, std::memory_order_release);
}
inline ReplicationHook* GetReplicationHook() {
  return g_replication_hook.load(std::memory_order_acquire);
}

}  // namespace sluice::server
