#include "server/core/blocked_command.h"

#include <chrono>
#include <exception>

#include "server/core/client_state.h"
#include "server/core/cluster_route.h"
#include "server/core/command_stats.h"
#include "server/core/dispatcher.h"
#include "server/core/errors.h"
#include "server/core/logging.h"
#include "server/core/server_state.h"
#include "server/core/slow_commands.h"

namespace sluice::server {

// ---- BlockedCommand

BlockedCommand::BlockedCommand(asio::any_io_executor executor, BlockingRegistry& registry,
                               ClientState& client)
    : registry_(registry), client_(client), timer_(std::move(executor)) {}

BlockedCommand::~BlockedCommand() { Forget(); }

bool BlockedCommand::Park(int db, std::span<const std::string_view> keys, BlockTimeout timeout) {
  if (!parked_ && !requested_) {
    ++gen_;
    timeout_ms_ = timeout.ms;
  }
  registry_.Park(&client_, db, keys,
                 [notify = notify_, gen = gen_](BlockEvent e) { notify(gen, e); });
  requested_ = true;
  return true;
}

bool BlockedCommand::TakePark(Args args, const Dispatcher& dispatcher, bool replied) {
  if (!requested_) {  // the usual case: nothing to move
    rewrites_.clear();
    return false;
  }
  auto rewrites = std::move(rewrites_);
  rewrites_.clear();
  requested_ = false;
  const CommandSpec* spec = dispatcher.Resolve(args);
  if (replied || spec == nullptr) {
    registry_.Remove(&client_);
    return false;
  }
  parked_ = true;
  spec_ = spec;
  args_.assign(args.begin(), args.end());
  if (!rewrites.empty()) sent_args_.assign(args.begin(), args.end());
  for (auto& [index, value] : rewrites) {
    if (index < args_.size()) args_[index] = std::move(value);
  }
  client_.blocked.store(true, std::memory_order_relaxed);
  if (timeout_ms_ > 0) {
    timer_.expires_after(std::chrono::milliseconds(timeout_ms_));
    // Captures no `this`: the handler may run after the connection is gone.
    timer_.async_wait([notify = notify_, gen = gen_](const std::error_code& ec) {
      if (!ec) notify(gen, BlockEvent::kTimeout);
    });
  }
  return true;
}

bool BlockedCommand::Note(uint64_t gen, BlockEvent event) {
  if (!parked_ || gen != gen_) return false;
  if (!event_ || *event_ == BlockEvent::kRetry) event_ = event;
  return true;
}

void BlockedCommand::RecordServed(CommandContext& ctx, uint64_t start_ticks) const {
  const std::vector<std::string>& sent = sent_args_.empty() ? args_ : sent_args_;
  std::vector<std::string_view> views(sent.begin(), sent.end());
  RecordCommandTime(ctx.server, client_, views, *spec_, CommandTicksNow() - start_ticks);
}

bool BlockedCommand::Resume(CommandContext& ctx, const Dispatcher& dispatcher) {
  const uint64_t start = CommandTicksNow();
  const BlockEvent event = event_.value_or(BlockEvent::kRetry);
  event_.reset();
  if (event != BlockEvent::kRetry) {
    // As Redis: a timeout (or CLIENT UNBLOCK TIMEOUT) answers a null array whatever the
    // command (BLMOVE too), without looking at the keys again.
    registry_.Remove(&client_);
    if (event == BlockEvent::kError) {
      ReplyError(ctx.out, UnblockedByClient());
    } else {
      ctx.out.NullArray();
    }
    RecordServed(ctx, start);
    Unpark();
    return true;
  }
  // Cluster mode: keys whose slot left this node get -MOVED (or -CLUSTERDOWN) instead of a run
  // (the cluster wakes its waiters when its slots change: ClusterHooks::routing_changed).
  if (const ClusterRouter* router = ctx.server.cluster()) {
    std::vector<std::string_view> views(args_.begin(), args_.end());
    if (std::optional<Status> redirect = BlockedClientRedirect(*router, ctx, *spec_, views)) {
      registry_.Remove(&client_);
      ReplyError(ctx.out, *redirect);
      Unpark();
      return true;
    }
  }
  retrying_ = true;
  woken_key_ = registry_.WokenKey(&client_);
  ctx.blocking = this;
  std::vector<std::string_view> views(args_.begin(), args_.end());
  const size_t reply_start = ctx.out.buffer()->size();
  try {
    dispatcher.RunAgain(ctx, *spec_, views);
  } catch (const std::exception& e) {
    LogError(std::string("command '") + args_[0] + "' failed: " + e.what());
    ReplyError(ctx.out, InternalError(e.what()));
  }
  retrying_ = false;
  woken_key_.clear();
  const bool replied = ctx.out.buffer()->size() > reply_start;
  if (requested_ && !replied) {  // parked again, in its places, with its timer
    requested_ = false;
    return false;
  }
  requested_ = false;
  registry_.Remove(&client_);
  RecordServed(ctx, start);
  Unpark();
  return true;
}

void BlockedCommand::Unpark() {
  parked_ = false;
  event_.reset();
  timer_.cancel();
  args_.clear();
  sent_args_.clear();
  spec_ = nullptr;
  client_.blocked.store(false, std::memory_order_relaxed);
}

void BlockedCommand::Forget() {
  if (parked_ || requested_) registry_.Remove(&client_);
  requested_ = false;
  if (parked_) Unpark();
}

}  // namespace sluice::server
