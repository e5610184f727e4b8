// ReplicationHook: the server core's view of replication. server/replication implements it and
// attaches it once before serving (SetReplicationHook); the gate (dispatcher.cc, cmd_multi.cc)
// calls it, so the core never depends on the replication room. With none attached every call
// site costs one relaxed atomic load.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

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
  // Admit's part for a write: -READONLY on a read-only replica, -NOREPLICAS under
  // min-replicas-to-write; the primary's link passes. Scripts' writes ask it too (below).
  virtual Status AdmitWrite(const CommandContext& ctx) = 0;
  // Beyond Redis (replica-ack-writes N): the stream offset this thread's writes reached since
  // the last call; 0 when none, or when the option is off. The I/O round asks once per round.
  virtual int64_t TakeWrittenOffset() = 0;
  // Calls `done` (on any thread, or at once) when N replicas acknowledged `offset`, or
  // replica-ack-timeout passed: the I/O round holds its replies until then.
  virtual void WhenAcked(int64_t offset, std::function<void()> done) = 0;
  // Called after each command that ran inside an enclosing unit (EXEC's, a script's), before
  // the next: a unit that writes a stream records its commands' effects one by one (Capture
  // then sends them in MULTI/EXEC instead of the state of its keys).
  virtual void Step(CommandContext& ctx, Store::Transaction& unit, const CommandSpec& spec,
                    Args args) = 0;
  // The unit's commands are run again (a lock conflict): forgets what Step recorded.
  virtual void AbandonSteps() = 0;

  // False until replication is first used (a backlog exists, this node became a replica, or
  // min-replicas-to-write was set): until then Capture, Step and Admit would do nothing but
  // clear t_effect_override, and the gate skips their virtual calls. It never goes back to
  // false (a unit may have staged effects across a change), so the calls' own checks stay.
  bool engaged() const { return engaged_.load(std::memory_order_acquire); }

 protected:
  // Called before any of the states above is entered (before propagating starts).
  void Engage() { engaged_.store(true, std::memory_order_seq_cst); }

 private:
  std::atomic<bool> engaged_{false};
};

// Redis's rewriteClientCommandVector / alsoPropagate: a handler whose argv would not do the same
// on a replica (XADD *, MAXLEN ~, XREADGROUP) records the commands that do, in its db; the hook
// takes them after the command ran (Capture or Step). Recorded only while a hook is attached.
struct EffectOverride {
  bool set = false;
  std::vector<std::vector<std::string>> commands;
  void Clear() {
    set = false;
    commands.clear();
  }
};
inline thread_local EffectOverride t_effect_override;

inline std::atomic<ReplicationHook*> g_replication_hook{nullptr};
// True when a handler should record its effect (PropagateAs).
inline bool WantsEffects() { return g_replication_hook.load(std::memory_order_relaxed) != nullptr; }
// The command propagates as `argv` (called again: also as the next one) instead of its own.
inline void PropagateAs(std::vector<std::string> argv) {
  t_effect_override.set = true;
  t_effect_override.commands.push_back(std::move(argv));
}
inline void SetReplicationHook(ReplicationHook* hook) {
  g_replication_hook.store(hook, std::memory_order_release);
}
inline ReplicationHook* GetReplicationHook() {
  return g_replication_hook.load(std::memory_order_acquire);
}
// The hook when it is engaged (above), else null: the per-command call sites' fast path.
inline ReplicationHook* EngagedReplicationHook() {
  ReplicationHook* hook = g_replication_hook.load(std::memory_order_acquire);
  return hook != nullptr && hook->engaged() ? hook : nullptr;
}
// A script's write as Redis's scriptPrepareForRun / scriptVerifyWriteCommandAllow: a script or
// function that may write, before it runs, and each write command a script calls. Ok without
// replication.
inline Status AdmitScriptWrite(const CommandContext& ctx) {
  ReplicationHook* repl = EngagedReplicationHook();
  return repl == nullptr ? Status::Ok() : repl->AdmitWrite(ctx);
}

}  // namespace sluice::server
