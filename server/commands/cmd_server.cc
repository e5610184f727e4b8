// Server commands: PING, ECHO, TIME, DBSIZE, FLUSHDB, FLUSHALL, SHUTDOWN, DEBUG; registers INFO,
// CONFIG and COMMAND from their files too.
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <thread>

#include "server/commands/cmd_cluster.h"
#include "server/commands/commands.h"
#include "server/commands/server_commands.h"
#include "server/core/args.h"
#include "server/core/client_state.h"
#include "server/core/errors.h"
#include "server/core/logging.h"
#include "server/core/server_state.h"
#include "sluice/store.h"

namespace sluice::server {

namespace {

void Ping(CommandContext& ctx, Args args) {
  if (args.size() > 2) return ReplyError(ctx.out, WrongArity("ping"));
  if (ctx.client.resp == 2 && ctx.client.subscribed()) {  // RESP2 subscribed mode: a frame
    ctx.out.Array(2);
    ctx.out.Bulk("pong");
    return ctx.out.Bulk(args.size() == 2 ? args[1] : std::string_view());
  }
  if (args.size() == 2) return ctx.out.Bulk(args[1]);
  ctx.out.Simple("PONG");
}

void Echo(CommandContext& ctx, Args args) { ctx.out.Bulk(args[1]); }

// TIME follows the server clock (the one DEBUG CLOCK drives), so it agrees with expiry.
void Time(CommandContext& ctx, Args) {
  int64_t ns = ctx.server.clock().NowNs();
  ctx.out.Array(2);
  ctx.out.Bulk(std::to_string(ns / 1'000'000'000));
  ctx.out.Bulk(std::to_string((ns % 1'000'000'000) / 1000));
}

void DbSize(CommandContext& ctx, Args) {
  Result<int64_t> n = ctx.txn().DbSize(ctx.client.db);
  if (!n.ok()) return ReplyError(ctx.out, n.status());
  ctx.out.Integer(*n);
}

// FLUSHDB/FLUSHALL [ASYNC|SYNC]: both modes flush synchronously.
bool FlushModeOk(Args args) {
  if (args.size() == 1) return true;
  return args.size() == 2 &&
         (EqualsIgnoreCase(args[1], "ASYNC") || EqualsIgnoreCase(args[1], "SYNC"));
}

void FlushDb(CommandContext& ctx, Args args) {
  if (!FlushModeOk(args)) return ReplyError(ctx.out, SyntaxError());
  Status s = ctx.txn().FlushDb(ctx.client.db);
  if (!s.ok()) return ReplyError(ctx.out, s);
  ctx.out.Simple("OK");
}

void FlushAll(CommandContext& ctx, Args args) {
  if (!FlushModeOk(args)) return ReplyError(ctx.out, SyntaxError());
  Status s = ctx.txn().FlushAll();
  if (!s.ok()) return ReplyError(ctx.out, s);
  ctx.out.Simple("OK");
}

// SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE]: every write is already durable, so the options change
// nothing, except while a script is busy: as on Redis, only NOSAVE shuts down then (-BUSY
// otherwise), and it does not wait for a busy script that has written. Like Redis, a
// successful SHUTDOWN sends no reply: the connection just closes.
void Shutdown(CommandContext& ctx, Args args) {
  bool nosave = false;
  for (size_t i = 1; i < args.size(); ++i) {
    if (EqualsIgnoreCase(args[i], "NOSAVE")) {
      nosave = true;
    } else if (!EqualsIgnoreCase(args[i], "SAVE") && !EqualsIgnoreCase(args[i], "NOW") &&
               !EqualsIgnoreCase(args[i], "FORCE")) {
      return ReplyError(ctx.out, SyntaxError());
    }
  }
  const RunningScripts::BusyKind busy = ctx.server.running_scripts().Busy(
      RunningScripts::SteadyNowMs(), ctx.server.busy_reply_threshold_ms());
  if (busy != RunningScripts::BusyKind::kNone && !nosave) {
    return ReplyError(ctx.out, Busy(busy == RunningScripts::BusyKind::kFunction));
  }
  ctx.client.close_after_reply = true;
  ctx.server.RequestShutdown(/*abandon_busy_script=*/busy != RunningScripts::BusyKind::kNone);
}

// DEBUG CLOCK SET <unix-ms> | ADVANCE <ms> | REAL | GET
void DebugClock(CommandContext& ctx, Args args) {
  if (args.size() < 3) return ReplyError(ctx.out, SyntaxError());
  std::string_view op = args[2];
  AdjustableClock& clock = ctx.server.clock();
  if (args.size() == 3 && EqualsIgnoreCase(op, "REAL")) {
    clock.UseReal();
    return ctx.out.Simple("OK");
  }
  if (args.size() == 3 && EqualsIgnoreCase(op, "GET")) return ctx.out.Integer(clock.NowMs());
  if (args.size() != 4) return ReplyError(ctx.out, SyntaxError());
  // Milliseconds that still fit in int64 nanoseconds.
  constexpr int64_t kMaxMs = INT64_MAX / 1'000'000;
  std::optional<int64_t> ms = ParseInt64(args[3]);
  if (!ms || *ms > kMaxMs || *ms < -kMaxMs) return ReplyError(ctx.out, NotAnInteger());
  if (EqualsIgnoreCase(op, "SET")) {
    if (*ms < 0) return ReplyError(ctx.out, NotAnInteger());
    clock.SetManualNs(*ms * 1'000'000);
  } else if (EqualsIgnoreCase(op, "ADVANCE")) {
    // The clock must stay in [0, kMaxMs] like DEBUG CLOCK SET's: an advance past it would
    // overflow int64 nanoseconds (AdjustableClock::AdvanceNs adds unchecked).
    int64_t target_ns = 0;
    if (__builtin_add_overflow(clock.NowNs(), *ms * 1'000'000, &target_ns) || target_ns < 0 ||
        target_ns > kMaxMs * 1'000'000) {
      return ReplyError(ctx.out, NotAnInteger());
    }
    clock.AdvanceNs(*ms * 1'000'000);
  } else {
    return ReplyError(ctx.out, SyntaxError());
  }
  ctx.out.Simple("OK");
}

// DEBUG SLEEP <seconds>: blocks this connection's I/O thread, as Redis blocks its one thread.
void DebugSleep(CommandContext& ctx, Args args) {
  if (args.size() != 3) return ReplyError(ctx.out, SyntaxError());
  std::optional<long double> seconds = ParseLongDouble(args[2]);
  if (!seconds || *seconds < 0 || *seconds > 3600) return ReplyError(ctx.out, NotAFloat());
  std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(*seconds * 1e6)));
  ctx.out.Simple("OK");
}

// DEBUG KEYSPACE-CHECK: every database's maintained counts (DBSIZE, INFO keyspace) against a
// walk of its keys, holding every stripe (the first run conflicts; the dispatcher reruns it
// with every stripe). +OK, or an error naming the first database that differs.
void DebugKeyspaceCheck(CommandContext& ctx, Args args) {
  if (args.size() != 2) return ReplyError(ctx.out, SyntaxError());
  for (int db = 0; db < kNumDatabases; ++db) {
    Result<KeyspaceCheckReport> r = ctx.txn().KeyspaceCheck(db);
    if (!r.ok()) return ReplyError(ctx.out, r.status());
    if (!r->ok()) return ReplyError(ctx.out, KeyspaceCountsDiffer(db, *r));
  }
  ctx.out.Simple("OK");
}

// DEBUG POPULATE <count> [<prefix>] [<size>], as Redis 7.0: string keys <prefix>:<n> (prefix
// "key") for n in [0, count), each "value:<n>" cut or zero-padded to <size> bytes when size is
// given and not 0; keys that exist are left as they are. Redis leaves these writes out of
// replication; here they are ordinary writes of one unit.
void DebugPopulate(CommandContext& ctx, Args args) {
  int64_t count = 0, size = 0;
  for (size_t i : {size_t{2}, size_t{4}}) {
    if (i >= args.size()) break;
    std::optional<int64_t> n = ParseInt64(args[i]);
    if (!n || *n < 0) return ReplyError(ctx.out, NotPositive());  // Redis: one text for both
    (i == 2 ? count : size) = *n;
  }
  const std::string prefix(args.size() >= 4 ? args[3] : std::string_view("key"));
  SetOptions options;
  options.condition = SetCondition::kIfAbsent;
  std::string key, value;
  for (int64_t j = 0; j < count; ++j) {
    key.assign(prefix).append(":").append(std::to_string(j));
    value.assign("value:").append(std::to_string(j));
    if (size != 0) value.resize(static_cast<size_t>(size), '\0');
    if (Status s = ctx.txn().Set(ctx.client.db, key, value, options).status(); !s.ok()) {
      return ReplyError(ctx.out, s);
    }
  }
  ctx.out.Simple("OK");
}

// DEBUG SEGFAULT and DEBUG PANIC crash the server on purpose (a write to an invalid address;
// an abort after a log line), so that tests can read the crash report.
void DebugCrash(bool panic) {
  if (panic) {
    LogError("Guru Meditation: DEBUG PANIC called");
    std::abort();
  }
  *reinterpret_cast<volatile char*>(~uintptr_t{0}) = 'x';
}

void DebugHelp(CommandContext& ctx) {
  static constexpr const char* kLines[] = {
      "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CLOCK SET <unix-ms>",
      "    Freeze the server clock (expiry and limiters) at <unix-ms>.",
      "CLOCK ADVANCE <ms>",
      "    Move the server clock by <ms> (switches to the manual clock).",
      "CLOCK REAL",
      "    Back to the wall clock.",
      "CLOCK GET",
      "    The server clock in ms since the epoch.",
      "SLEEP <seconds>",
      "    Stop this connection's I/O thread for <seconds>.",
      "DROP-CLUSTER-PACKET-FILTER <packet-type>",
      "    Drop all packets that match the filtered type. Set to -1 allow all packets.",
      "KEYSPACE-CHECK",
      "    Compare every database's key counts (DBSIZE) with a walk of its keys.",
      "DIGEST",
      "    Output a hex signature representing the current DB content (Sluice's own digits).",
      "DIGEST-VALUE <key> [<key> ...]",
      "    Output a hex signature of the values of all the specified keys.",
      "POPULATE <count> [<prefix>] [<size>]",
      "    Write <count> string keys <prefix>:<n> (prefix 'key') holding value:<n>, padded",
      "    or cut to <size> bytes; existing keys stay. Slots are not checked in cluster mode.",
      "SEGFAULT",
      "    Crash the server with sigsegv.",
      "PANIC",
      "    Crash the server simulating a panic.",
      "HELP",
      "    Prints this help.",
  };
  ctx.out.Array(std::size(kLines));
  for (const char* line : kLines) ctx.out.Simple(line);
}

}  // namespace

// cmd_dump.cc (they need the DUMP payload).
void DebugDigest(CommandContext& ctx, Args args);
void DebugDigestValue(CommandContext& ctx, Args args);

namespace {

void Debug(CommandContext& ctx, Args args) {
  if (!ctx.server.debug_enabled()) return ReplyError(ctx.out, DebugNotAllowed());
  std::string_view sub = args[1];
  if (EqualsIgnoreCase(sub, "CLOCK")) return DebugClock(ctx, args);
  if (EqualsIgnoreCase(sub, "SLEEP")) return DebugSleep(ctx, args);
  if (EqualsIgnoreCase(sub, "KEYSPACE-CHECK")) return DebugKeyspaceCheck(ctx, args);
  if (EqualsIgnoreCase(sub, "DIGEST")) return DebugDigest(ctx, args);
  if (EqualsIgnoreCase(sub, "DIGEST-VALUE")) return DebugDigestValue(ctx, args);
  if (EqualsIgnoreCase(sub, "POPULATE") && args.size() >= 3 && args.size() <= 5) {
    return DebugPopulate(ctx, args);
  }
  if (EqualsIgnoreCase(sub, "DROP-CLUSTER-PACKET-FILTER") && args.size() == 3) {
    return DebugDropClusterPacketFilter(ctx, args);
  }
  if (EqualsIgnoreCase(sub, "SEGFAULT") || EqualsIgnoreCase(sub, "PANIC")) {
    return DebugCrash(EqualsIgnoreCase(sub, "PANIC"));
  }
  if (EqualsIgnoreCase(sub, "HELP") && args.size() == 2) return DebugHelp(ctx);
  ReplyError(ctx.out, UnknownSubcommand("debug", sub));
}

}  // namespace

CommandSpec ServerSpec(const char* name, int arity, uint32_t flags, Handler handler,
                       const char* summary, const char* since, const char* hint,
                       const char* group) {
  return MakeSpec(group, name, arity, flags, {}, handler, summary, since, hint);
}

void RegisterServerCommands(CommandTable& table) {
  table.Add(ServerSpec("ping", -1, kFast, Ping, "Returns the server's liveliness response.",
                       "1.0.0", "[message]", "connection"));
  table.Add(ServerSpec("echo", 2, kFast | kLoading | kStale, Echo, "Returns the given string.",
                       "1.0.0", "message", "connection"));
  table.Add(ServerSpec("time", 1, kLoading | kStale | kFast, Time,
                       "Returns the server time (the clock DEBUG CLOCK drives).", "2.6.0", ""));
  table.Add(ServerSpec("dbsize", 1, kReadOnly | kFast, DbSize,
                       "Returns the number of keys in the database.", "1.0.0", "", "server"));
  table.Add(ServerSpec("flushdb", -1, kWrite, FlushDb,
                       "Removes all keys from the current database.", "1.0.0", "[ASYNC|SYNC]"));
  table.Add(ServerSpec("flushall", -1, kWrite, FlushAll, "Removes all keys from all databases.",
                       "1.0.0", "[ASYNC|SYNC]"));
  table.Add(ServerSpec("shutdown", -1,
                       kAdmin | kNoScript | kLoading | kStale | kNoMulti | kAllowBusy, Shutdown,
                       "Stops the server (every write is already durable).", "1.0.0",
                       "[NOSAVE|SAVE] [NOW] [FORCE]"));
  table.Add(
      ServerSpec("debug", -2, kAdmin | kNoScript | kLoading | kStale, Debug,
                 "Test helpers (needs enable-debug-command yes): DEBUG CLOCK SET|ADVANCE|REAL.",
                 "1.0.0", "subcommand [argument ...]"));
  RegisterInfoCommand(table);
  RegisterConfigCommands(table);
  RegisterCommandCommands(table);
}

}  // namespace sluice::server
