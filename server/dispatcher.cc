#include "server/dispatcher.h"

#include "server/client_state.h"
#include "server/errors.h"
#include "server/server_state.h"

namespace sluice::server {

namespace {

// "config" + "|" + "get" into a per-thread buffer (keeps its capacity: no steady-state
// allocation).
std::string_view SubcommandName(std::string_view container, std::string_view sub) {
  thread_local std::string name;
  name.assign(container);
  name += '|';
  name += sub;
  return name;
}

// A container command is registered without a handler; its subcommands carry the handlers.
bool IsContainer(const CommandSpec& spec) { return spec.handler == nullptr; }

// `count`: false for a subcommand run by its parent's handler (already counted).
void RecordCommand(CommandContext& ctx, const CommandSpec& spec, bool count) {
  if (count) ctx.server.stats().total_commands_processed.fetch_add(1, std::memory_order_relaxed);
  // Atomics read by CLIENT LIST and the idle sweep: no shared lock on the hot path.
  ctx.client.last_command.store(&spec.name, std::memory_order_relaxed);
  ctx.client.last_interaction_ms.store(ServerState::RealNowMs(), std::memory_order_relaxed);
}

// Arity, authentication, bookkeeping, handler: the common tail once `spec` is resolved.
void Run(CommandContext& ctx, const CommandSpec& spec, Args args, bool count) {
  if (!ArityOk(spec, args.size())) return ReplyError(ctx.out, WrongArity(spec.name));
  if (!ctx.client.authenticated && !(spec.flags & kNoAuth) && ctx.server.requirepass_set()) {
    return ReplyError(ctx.out, NoAuth());
  }
  RecordCommand(ctx, spec, count);
  std::string* buffer = ctx.out.buffer();
  size_t reply_start = buffer->size();
  spec.handler(ctx, args);
  if (buffer->size() > reply_start && (*buffer)[reply_start] == '-') {
    ctx.server.stats().total_error_replies.fetch_add(1, std::memory_order_relaxed);
  }
}

void RunSubcommand(CommandContext& ctx, const CommandTable& table, const CommandSpec& container,
                   Args args, bool count) {
  const CommandSpec* sub = table.Find(SubcommandName(container.name, args[1]));
  if (sub == nullptr) return ReplyError(ctx.out, UnknownSubcommand(container.name, args[1]));
  Run(ctx, *sub, args, count);
}

}  // namespace

const CommandSpec* Dispatcher::Resolve(Args args) const {
  if (args.empty()) return nullptr;
  const CommandSpec* spec = table_.Find(args[0]);
  if (spec == nullptr || !IsContainer(*spec) || args.size() < 2) return spec;
  return table_.Find(SubcommandName(spec->name, args[1]));
}

void Dispatcher::Dispatch(CommandContext& ctx, Args args) const {
  if (args.empty()) return;
  const CommandSpec* spec = table_.Find(args[0]);
  if (spec == nullptr) return ReplyError(ctx.out, UnknownCommand(args[0], args.subspan(1)));
  if (!IsContainer(*spec)) return Run(ctx, *spec, args, true);
  if (args.size() < 2) return ReplyError(ctx.out, WrongArity(spec->name));
  RunSubcommand(ctx, table_, *spec, args, true);
}

void DispatchSubcommand(CommandContext& ctx, const CommandTable& table,
                        const CommandSpec& container, Args args) {
  RunSubcommand(ctx, table, container, args, false);
}

}  // namespace sluice::server
