// SLOWLOG GET [count] | LEN | RESET | HELP over the server's slow log (server/core/slowlog.h);
// what goes in is decided by slowlog-log-slower-than and slowlog-max-len (CONFIG SET).
#include <optional>
#include <string>

#include "server/commands/commands.h"
#include "server/core/args.h"
#include "server/core/errors.h"
#include "server/core/server_state.h"
#include "server/core/slowlog.h"

namespace sluice::server {

namespace {

void SlowlogGet(CommandContext& ctx, Args args) {
  if (args.size() > 3) return ReplyError(ctx.out, SubcommandSyntax("slowlog", args[1]));
  int64_t count = 10;
  if (args.size() == 3) {
    std::optional<int64_t> n = ParseInt64(args[2]);
    if (!n || *n < -1) return ReplyError(ctx.out, SlowlogCountBad());
    count = *n == -1 ? ctx.server.slowlog().Len() : *n;
  }
  const std::vector<SlowLogEntry> entries = ctx.server.slowlog().Get(count);
  ctx.out.Array(entries.size());
  for (const SlowLogEntry& e : entries) {
    ctx.out.Array(6);
    ctx.out.Integer(e.id);
    ctx.out.Integer(e.unix_s);
    ctx.out.Integer(e.micros);
    ctx.out.Array(e.args.size());
    for (const std::string& a : e.args) ctx.out.Bulk(a);
    ctx.out.Bulk(e.addr);
    ctx.out.Bulk(e.name);
  }
}

void SlowlogLen(CommandContext& ctx, Args) { ctx.out.Integer(ctx.server.slowlog().Len()); }

void SlowlogReset(CommandContext& ctx, Args) {
  ctx.server.slowlog().Reset();
  ctx.out.Simple("OK");
}

void SlowlogHelp(CommandContext& ctx, Args) {
  static const char* const kLines[] = {
      "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "GET [<count>]",
      "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
      "    Entries are made of:",
      "    id, timestamp, time in microseconds, arguments array, client IP and port,",
      "    client name",
      "LEN",
      "    Return the length of the slowlog.",
      "RESET",
      "    Reset the slowlog.",
      "HELP",
      "    Prints this help.",
  };
  ctx.out.Array(std::size(kLines));
  for (const char* line : kLines) ctx.out.Simple(line);
}

}  // namespace

void RegisterSlowlogCommands(CommandTable& table) {
  constexpr uint32_t kFlags = kAdmin | kLoading | kStale;
  table.Add(MakeSpec("server", "slowlog", -2, 0, {}, nullptr, "A container for slow log commands",
                     "2.2.12", "subcommand"));
  table.Add(MakeSpec("server", "slowlog|get", -2, kFlags, {}, SlowlogGet,
                     "Get the slow log's entries", "2.2.12", "[count]"));
  table.Add(MakeSpec("server", "slowlog|len", 2, kFlags, {}, SlowlogLen,
                     "Get the slow log's length", "2.2.12", ""));
  table.Add(MakeSpec("server", "slowlog|reset", 2, kFlags, {}, SlowlogReset,
                     "Clear all entries from the slow log", "2.2.12", ""));
  table.Add(MakeSpec("server", "slowlog|help", 2, kLoading | kStale, {}, SlowlogHelp,
                     "Show helpful text about the different subcommands", "6.2.0", ""));
}

}  // namespace sluice::server
