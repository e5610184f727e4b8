// CLIENT PAUSE timeout [WRITE|ALL] and CLIENT UNPAUSE. The pause lives in ServerState; each
// connection holds back a command the pause covers, with the rest of its input, until the pause
// ends (Connection::RunBatchCommands), as Redis postpones paused clients.
#include <optional>

#include "server/commands/commands.h"
#include "server/core/args.h"
#include "server/core/errors.h"
#include "server/core/pause_purposes.h"
#include "server/core/server_state.h"

namespace sluice::server {

namespace {

// Redis checks the mode, then the timeout (integer milliseconds, not negative); 0 ends at once.
void ClientPause(CommandContext& ctx, Args args) {
  if (args.size() > 4) return ReplyError(ctx.out, SubcommandSyntax("client", args[1]));
  bool all = true;
  if (args.size() == 4) {
    if (EqualsIgnoreCase(args[3], "write")) {
      all = false;
    } else if (!EqualsIgnoreCase(args[3], "all")) {
      return ReplyError(ctx.out, PauseModeBad());
    }
  }
  std::optional<int64_t> ms = ParseInt64(args[2]);
  if (!ms) {
    return ReplyError(ctx.out, TimeoutNotInteger());
  }
  if (*ms < 0) return ReplyError(ctx.out, TimeoutNegative());
  const int64_t now = ServerState::RealNowMs();
  if (*ms > INT64_MAX - now) {
    return ReplyError(ctx.out, TimeoutOutOfRange());
  }
  // Its own purpose: a failover's write pause (FAILOVER) stays whatever this sets. Merged with
  // an earlier CLIENT PAUSE still on, as Redis 7.0 (the later end, the more restrictive kind).
  AddPause(ctx.server, PausePurpose::kClientCommand, now + *ms, all);
  ctx.out.Simple("OK");
}

void ClientUnpause(CommandContext& ctx, Args) {
  LiftPause(ctx.server, PausePurpose::kClientCommand);
  ctx.out.Simple("OK");
}

}  // namespace

void RegisterClientPauseCommands(CommandTable& table) {
  constexpr uint32_t kFlags = kAdmin | kNoScript | kLoading | kStale;
  table.Add(MakeSpec("connection", "client|pause", -3, kFlags, {}, ClientPause,
                     "Stop processing commands from clients for some time", "3.0.0",
                     "timeout [WRITE|ALL]"));
  table.Add(MakeSpec("connection", "client|unpause", 2, kFlags, {}, ClientUnpause,
                     "Resume processing of clients that were paused", "6.2.0", ""));
}

}  // namespace sluice::server
