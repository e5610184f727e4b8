// The Dispatcher runs one parsed command: finds it in the table (container commands such as
// CONFIG and CLIENT resolve their subcommand, registered as "config|get"), checks arity and
// authentication centrally, records the client's last command and the stats, then calls the
// handler. Errors are replied here with Redis's exact text; handlers only see valid arity.
// Thread-safe: one Dispatcher may serve every connection (it holds only the immutable table).
#pragma once

#include "server/command.h"

namespace sluice::server {

class Dispatcher {
 public:
  explicit Dispatcher(const CommandTable& table) : table_(table) {}

  // Runs `args` (args[0] is the command name; empty args do nothing) and appends one reply to
  // ctx.out (SHUTDOWN, which closes the connection, may append none). Does not allocate in
  // steady state beyond what the handler does.
  void Dispatch(CommandContext& ctx, Args args) const;

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

}  // namespace sluice::server
