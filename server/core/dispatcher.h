// Room server/core: the one gate every command passes, and what every command shares (the
// command table, errors, config, server state, blocking, WATCH). Sees no other server room.
//
// The Dispatcher is the one gate every command passes (as Redis's processCommand): it finds the
// command in the table (container commands such as CONFIG and CLIENT resolve their subcommand,
// registered as "config|get"), checks arity, authentication and the MULTI rules centrally,
// queues the command when the client is inside MULTI, and otherwise runs it in a unit of work
// planned from the command table (see PlanUnit): the handler's data operations go through that
// unit, which is committed (one RocksDB write) when the handler returns. Errors are replied here
// with Redis's exact text; handlers only see valid arity.
// Thread-safe: one Dispatcher may serve every connection (it holds only the immutable table).
#pragma once

#include <vector>

#include "server/core/command.h"

namespace sluice::server {

class Dispatcher {
 public:
  explicit Dispatcher(const CommandTable& table) : table_(table) {}

  // Runs `args` (args[0] is the command name; empty args do nothing) and appends one reply to
  // ctx.out (SHUTDOWN, which closes the connection, may append none). When ctx.unit is already
  // set (inside an EXEC or a script) the command runs in that unit instead of its own. Does not
  // allocate in steady state beyond what the handler does.
  void Dispatch(CommandContext& ctx, Args args) const;

  // Runs a command that already passed the gate (a queued command, at EXEC) in ctx.unit.
  void RunQueued(CommandContext& ctx, const CommandSpec& spec, Args args) const;

  // Runs a parked blocking command again (server/core/blocking.h) in a unit of its own, as
  // RunQueued but not counted again in the command statistics.
  void RunAgain(CommandContext& ctx, const CommandSpec& spec, Args args) const;

  // The spec that would run `args`, resolving subcommands; nullptr when unknown.
  const CommandSpec* Resolve(Args args) const;

 private:
  const CommandTable& table_;
};

// For a command that has both its own handler (no subcommand given) and subcommands, like
// COMMAND: runs args[1] as subcommand of `container` through the same checks as the
// Dispatcher (unknown subcommand, arity, authentication, stats). Requires args.size() >= 2.
void DispatchSubcommand(CommandContext& ctx, const CommandTable& table,
                        const CommandSpec& container, Args args);

// What a command's own unit of work locks, from the command table (Redis's key specs): a write
// locks its keys, or every stripe when it has none (FLUSHDB); a read-only command locks nothing
// (reads see committed state); any other command with keys (WATCH) locks them; a kScriptUnit
// command (EVAL) locks its keys and isolates its reads. Appends the keys
// to *keys (db is the client's selected database).
struct UnitPlan {
  bool data = false;           // the command touches data: it gets a unit of its own
  bool all_keys = false;       // it needs every stripe
  bool lock_keys = false;      // it locks the keys it names
  bool isolate_reads = false;  // its reads lock their keys too (kScriptUnit)
};
UnitPlan PlanUnit(const CommandSpec& spec, Args args, int db, std::vector<KeyRef>* keys);

}  // namespace sluice::server
