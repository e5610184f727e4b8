// The rate-limit command family: GCRA.TAKE, CL.THROTTLE, LEAKY.TAKE, WINDOW.TAKE, SLIDING.TAKE,
// CONC.ACQUIRE, CONC.RELEASE. Each handler parses its arguments (limiter_args.h), makes one
// atomic call into sluice::Store, records the decision for `INFO limiters` and replies.
// The contract is ../shared/spec/LIMITERS.md; docs/limiters.md is the user's page.
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "server/client_state.h"
#include "server/command.h"
#include "server/errors.h"
#include "server/limiter_args.h"
#include "server/limiter_stats.h"
#include "server/server_state.h"
#include "sluice/limiter.h"
#include "sluice/store.h"

namespace sluice::server {
namespace {

// Replies with `result`'s decision (plus `extras`) or its error, and counts the call.
void Finish(CommandContext& ctx, LimiterCommand cmd, const Result<limiter::Decision>& result,
            std::span<const ExtraField> extras = {}) {
  if (!result.ok()) return ReplyError(ctx.out, result.status());
  ctx.server.limiter_stats().Record(cmd, result->allowed);
  ReplyDecision(ctx.out, *result, extras);
}

// GCRA.TAKE key quota period [BURST capacity] [COST n]
Status GcraTakeArgs(Args args, limiter::GcraParams* params, LimiterOptions* opts) {
  int64_t quota = 0, period_ns = 0;
  Status s = ParsePositive(args[2], "quota", &quota);
  if (s.ok()) s = ParseDurationArg(args[3], "period", &period_ns);
  if (s.ok()) s = ParseLimiterOptions(args, 4, kOptBurst | kOptCost, opts);
  if (s.ok())
    s = FromLimiterMessage(limiter::MakeGcraParams(quota, period_ns, opts->burst, params));
  return s;
}

void GcraTakeCommand(CommandContext& ctx, Args args) {
  limiter::GcraParams params;
  LimiterOptions opts;
  Status s = GcraTakeArgs(args, &params, &opts);
  if (!s.ok()) return ReplyError(ctx.out, s);
  Finish(ctx, LimiterCommand::kGcraTake,
         ctx.txn().GcraTake(ctx.client.db, args[1], params, opts.cost));
}

// CL.THROTTLE key max_burst count period [quantity]
Status ClThrottleArgs(Args args, limiter::GcraParams* params, int64_t* quantity) {
  if (args.size() > 6) return WrongArity("cl.throttle");
  int64_t max_burst = 0, count = 0, period_s = 0;
  Status s = ParseNonNegative(args[2], "max_burst", &max_burst);
  if (s.ok()) s = ParsePositive(args[3], "count", &count);
  if (s.ok()) s = ParsePositive(args[4], "period", &period_s);
  if (s.ok() && args.size() == 6) s = ParseNonNegative(args[5], "quantity", quantity);
  if (s.ok()) s = FromLimiterMessage(limiter::MakeCellParams(max_burst, count, period_s, params));
  return s;
}

// redis-cell's reply: [limited, limit, remaining, retry_after_s, reset_after_s], in both
// protocols.
void WriteCellReply(protocol::ReplyWriter& out, const limiter::Decision& d) {
  const limiter::CellReply r = limiter::ToCellReply(d);
  out.Array(5);
  out.Integer(r.limited);
  out.Integer(r.limit);
  out.Integer(r.remaining);
  out.Integer(r.retry_after_s);
  out.Integer(r.reset_after_s);
}

void ClThrottleCommand(CommandContext& ctx, Args args) {
  limiter::GcraParams params;
  int64_t quantity = 1;
  Status s = ClThrottleArgs(args, &params, &quantity);
  if (!s.ok()) return ReplyError(ctx.out, s);
  Result<limiter::Decision> result = ctx.txn().GcraTake(ctx.client.db, args[1], params, quantity);
  if (!result.ok()) return ReplyError(ctx.out, result.status());
  ctx.server.limiter_stats().Record(LimiterCommand::kClThrottle, result->allowed);
  WriteCellReply(ctx.out, *result);
}

// LEAKY.TAKE key rate period [BURST n] [DELAY n | NODELAY] [COST n]
Status LeakyTakeArgs(Args args, limiter::LeakyParams* params, LimiterOptions* opts) {
  int64_t rate = 0, period_ns = 0;
  Status s = ParsePositive(args[2], "rate", &rate);
  if (s.ok()) s = ParseDurationArg(args[3], "period", &period_ns);
  const unsigned accepted = kOptBurst | kOptBurstMayBeZero | kOptDelay | kOptNoDelay | kOptCost;
  if (s.ok()) s = ParseLimiterOptions(args, 4, accepted, opts);
  if (s.ok()) {
    s = FromLimiterMessage(limiter::MakeLeakyParams(rate, period_ns, opts->burst, opts->delay,
                                                    opts->has(kOptNoDelay), params));
  }
  return s;
}

void LeakyTakeCommand(CommandContext& ctx, Args args) {
  limiter::LeakyParams params;
  LimiterOptions opts;
  Status s = LeakyTakeArgs(args, &params, &opts);
  if (!s.ok()) return ReplyError(ctx.out, s);
  Result<limiter::Decision> result = ctx.txn().LeakyTake(ctx.client.db, args[1], params, opts.cost);
  int64_t delay_ms = result.ok() ? limiter::CeilMs(result->delay_ns) : 0;
  const ExtraField extras[] = {{"delay_ms", delay_ms, std::nullopt}};
  Finish(ctx, LimiterCommand::kLeakyTake, result, extras);
}

// WINDOW.TAKE / SLIDING.TAKE key limit window [COST n]
Status WindowArgs(Args args, int64_t* limit, int64_t* window_ns, LimiterOptions* opts) {
  Status s = ParsePositive(args[2], "limit", limit);
  if (s.ok()) s = ParseDurationArg(args[3], "window", window_ns);
  if (s.ok()) s = ParseLimiterOptions(args, 4, kOptCost, opts);
  return s;
}

void WindowTakeCommand(CommandContext& ctx, Args args) {
  int64_t limit = 0, window_ns = 0;
  LimiterOptions opts;
  limiter::WindowParams params;
  Status s = WindowArgs(args, &limit, &window_ns, &opts);
  if (s.ok()) s = FromLimiterMessage(limiter::MakeWindowParams(limit, window_ns, &params));
  if (!s.ok()) return ReplyError(ctx.out, s);
  Finish(ctx, LimiterCommand::kWindowTake,
         ctx.txn().WindowTake(ctx.client.db, args[1], params, opts.cost));
}

void SlidingTakeCommand(CommandContext& ctx, Args args) {
  int64_t limit = 0, window_ns = 0;
  LimiterOptions opts;
  limiter::SlidingParams params;
  Status s = WindowArgs(args, &limit, &window_ns, &opts);
  if (s.ok()) s = FromLimiterMessage(limiter::MakeSlidingParams(limit, window_ns, &params));
  if (!s.ok()) return ReplyError(ctx.out, s);
  Finish(ctx, LimiterCommand::kSlidingTake,
         ctx.txn().SlidingTake(ctx.client.db, args[1], params, opts.cost));
}

// CONC.ACQUIRE key limit lease [ID token]
void ConcAcquireCommand(CommandContext& ctx, Args args) {
  int64_t limit = 0, lease_ns = 0;
  LimiterOptions opts;
  limiter::ConcParams params;
  Status s = ParsePositive(args[2], "limit", &limit);
  if (s.ok()) s = ParseDurationArg(args[3], "lease", &lease_ns);
  if (s.ok()) s = ParseLimiterOptions(args, 4, kOptId, &opts);
  if (s.ok()) s = FromLimiterMessage(limiter::MakeConcParams(limit, lease_ns, &params));
  if (!s.ok()) return ReplyError(ctx.out, s);
  Result<ConcAcquireReply> result = ctx.txn().ConcAcquire(ctx.client.db, args[1], params, opts.id);
  if (!result.ok()) return ReplyError(ctx.out, result.status());
  const limiter::Decision& d = result->decision;
  ctx.server.limiter_stats().Record(LimiterCommand::kConcAcquire, d.allowed);
  std::optional<std::string_view> token;
  if (d.allowed) token = result->token;
  const ExtraField extras[] = {{"token", std::nullopt, token}};
  ReplyDecision(ctx.out, d, extras);
}

// CONC.RELEASE key token
void ConcReleaseCommand(CommandContext& ctx, Args args) {
  Result<bool> released = ctx.txn().ConcRelease(ctx.client.db, args[1], args[2]);
  if (!released.ok()) return ReplyError(ctx.out, released.status());
  ctx.server.limiter_stats().Record(LimiterCommand::kConcRelease, *released);
  ctx.out.Integer(*released ? 1 : 0);
}

CommandSpec LimiterSpec(std::string name, int arity, uint32_t flags, Handler handler,
                        std::string summary, std::string hint) {
  return MakeSpec("rate-limit", std::move(name), arity, flags, {1, 1, 1}, handler,
                  std::move(summary), "0.1.0", std::move(hint));
}

}  // namespace

void RegisterLimiterCommands(CommandTable& table) {
  const uint32_t take = kWrite | kDenyOom | kFast;
  table.Add(LimiterSpec("gcra.take", -4, take, GcraTakeCommand,
                        "Takes units from a GCRA rate limiter (smooth rate with a burst).",
                        "key quota period [BURST capacity] [COST n]"));
  table.Add(LimiterSpec("cl.throttle", -5, take, ClThrottleCommand,
                        "redis-cell compatible GCRA rate limiter.",
                        "key max_burst count period [quantity]"));
  table.Add(LimiterSpec("leaky.take", -4, take, LeakyTakeCommand,
                        "Takes from a leaky bucket (nginx limit_req), with a suggested delay.",
                        "key rate period [BURST n] [DELAY n|NODELAY] [COST n]"));
  table.Add(LimiterSpec("window.take", -4, take, WindowTakeCommand,
                        "Counts units in a fixed window that starts at the first request.",
                        "key limit window [COST n]"));
  table.Add(LimiterSpec("sliding.take", -4, take, SlidingTakeCommand,
                        "Counts units in an exact sliding window (at most 10000 per window).",
                        "key limit window [COST n]"));
  table.Add(LimiterSpec("conc.acquire", -4, take, ConcAcquireCommand,
                        "Acquires one of `limit` concurrency slots for a lease.",
                        "key limit lease [ID token]"));
  table.Add(LimiterSpec("conc.release", 3, kWrite | kFast, ConcReleaseCommand,
                        "Releases a concurrency slot held by a token.", "key token"));
}

}  // namespace sluice::server
