// The rate-limit command family: GCRA.TAKE, CL.THROTTLE, LEAKY.TAKE, WINDOW.TAKE, SLIDING.TAKE,
// CONC.ACQUIRE, CONC.RELEASE, and LIMITS.TAKE (cmd_limits_take.cc). Each handler parses its
// arguments (limiter_args.h), makes one atomic call into sluice::Store, records the decision for
// `INFO limiters` and replies. The contract is ../shared/spec/LIMITERS.md; docs/limiters.md is the
// user's page.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

#include "server/commands/commands.h"
#include "server/commands/limiter_args.h"
#include "server/commands/limiter_headers.h"
#include "server/commands/notify_events.h"
#include "server/core/client_state.h"
#include "server/core/errors.h"
#include "server/core/limiter_stats.h"
#include "server/core/server_state.h"
#include "sluice/limiter.h"
#include "sluice/store.h"

namespace sluice::server {
namespace {

// The store call for one take, chosen by the algorithm.
Result<limiter::Decision> TakeOne(Store::Transaction& txn, int db, std::string_view key,
                                  const limiter::LimitParams& params, int64_t cost) {
  return std::visit(
      [&](const auto& p) -> Result<limiter::Decision> {
        using T = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<T, limiter::GcraParams>) {
          return txn.GcraTake(db, key, p, cost);
        } else if constexpr (std::is_same_v<T, limiter::WindowParams>) {
          return txn.WindowTake(db, key, p, cost);
        } else if constexpr (std::is_same_v<T, limiter::SlidingParams>) {
          return txn.SlidingTake(db, key, p, cost);
        } else {
          return txn.LeakyTake(db, key, p, cost);
        }
      },
      params);
}

// The five fields (LEAKY: then delay_ms), then the header lines when asked for.
void ReplyTake(CommandContext& ctx, const LimitArgs& la, LimitAlgo algo,
               const limiter::Decision& d) {
  const bool leaky = algo == LimitAlgo::kLeaky;
  const bool headers = la.opts.has(kOptHeaders);
  BeginDecision(ctx.out, d, (leaky ? 1 : 0) + (headers ? 1 : 0));
  if (leaky) WriteExtra(ctx.out, {"delay_ms", limiter::CeilMs(d.delay_ns), std::nullopt});
  if (!headers) return;
  const HeaderPolicy policy{la.opts.has(kOptPolicy) ? la.opts.policy : "default", la.quota,
                            la.window_ns};
  FieldName(ctx.out, "headers");
  WriteHeaders(ctx.out, RateLimitHeaders({&policy, 1}, {&d, 1}, d));
}

// GCRA.TAKE key quota period [BURST capacity] [COST n | REFUND n] [HEADERS [POLICY name]]
// LEAKY.TAKE key rate period [BURST n] [DELAY n | NODELAY] [COST n | REFUND n] [HEADERS ...]
// WINDOW.TAKE / SLIDING.TAKE key limit window [COST n | REFUND n] [HEADERS [POLICY name]]
// One handler for the four: parse, take or refund, count, reply.
void TakeCommand(CommandContext& ctx, Args args, LimitAlgo algo, LimiterCommand cmd) {
  LimitArgs la;
  Status s =
      ParseLimitArgs(algo, args.subspan(2), kOptCost | kOptRefund | kOptHeaders | kOptPolicy, &la);
  if (s.ok() && la.opts.has(kOptPolicy) && !la.opts.has(kOptHeaders)) s = PolicyWithoutHeaders();
  if (!s.ok()) return ReplyError(ctx.out, s);
  const bool refund = la.opts.has(kOptRefund);
  const LimiterWriteWatch watch(ctx, args[1]);
  Result<limiter::Decision> result =
      refund ? ctx.txn().LimitRefund(ctx.client.db, args[1], la.params, la.opts.refund)
             : TakeOne(ctx.txn(), ctx.client.db, args[1], la.params, la.opts.cost);
  if (!result.ok()) return ReplyError(ctx.out, result.status());
  watch.Fire(ctx, args[1]);
  if (refund) {
    ctx.server.limiter_stats().RecordRefund(cmd);
  } else {
    ctx.server.limiter_stats().Record(cmd, result->allowed);
  }
  ReplyTake(ctx, la, algo, *result);
}

void GcraTakeCommand(CommandContext& ctx, Args args) {
  TakeCommand(ctx, args, LimitAlgo::kGcra, LimiterCommand::kGcraTake);
}
void LeakyTakeCommand(CommandContext& ctx, Args args) {
  TakeCommand(ctx, args, LimitAlgo::kLeaky, LimiterCommand::kLeakyTake);
}
void WindowTakeCommand(CommandContext& ctx, Args args) {
  TakeCommand(ctx, args, LimitAlgo::kWindow, LimiterCommand::kWindowTake);
}
void SlidingTakeCommand(CommandContext& ctx, Args args) {
  TakeCommand(ctx, args, LimitAlgo::kSliding, LimiterCommand::kSlidingTake);
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
  const LimiterWriteWatch watch(ctx, args[1]);
  Result<limiter::Decision> result = ctx.txn().GcraTake(ctx.client.db, args[1], params, quantity);
  if (!result.ok()) return ReplyError(ctx.out, result.status());
  watch.Fire(ctx, args[1]);
  ctx.server.limiter_stats().Record(LimiterCommand::kClThrottle, result->allowed);
  WriteCellReply(ctx.out, *result);
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
  const LimiterWriteWatch watch(ctx, args[1]);
  Result<ConcAcquireReply> result = ctx.txn().ConcAcquire(ctx.client.db, args[1], params, opts.id);
  if (!result.ok()) return ReplyError(ctx.out, result.status());
  watch.Fire(ctx, args[1]);
  const limiter::Decision& d = result->decision;
  ctx.server.limiter_stats().Record(LimiterCommand::kConcAcquire, d.allowed);
  std::optional<std::string_view> token;
  if (d.allowed) token = result->token;
  const ExtraField extras[] = {{"token", std::nullopt, token}};
  ReplyDecision(ctx.out, d, extras);
}

// CONC.RELEASE key token
void ConcReleaseCommand(CommandContext& ctx, Args args) {
  const LimiterWriteWatch watch(ctx, args[1]);
  Result<bool> released = ctx.txn().ConcRelease(ctx.client.db, args[1], args[2]);
  if (!released.ok()) return ReplyError(ctx.out, released.status());
  watch.Fire(ctx, args[1]);
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
                        "key quota period [BURST capacity] [COST n|REFUND n] "
                        "[HEADERS [POLICY name]]"));
  table.Add(LimiterSpec("cl.throttle", -5, take, ClThrottleCommand,
                        "redis-cell compatible GCRA rate limiter.",
                        "key max_burst count period [quantity]"));
  table.Add(LimiterSpec("leaky.take", -4, take, LeakyTakeCommand,
                        "Takes from a leaky bucket (nginx limit_req), with a suggested delay.",
                        "key rate period [BURST n] [DELAY n|NODELAY] [COST n|REFUND n] "
                        "[HEADERS [POLICY name]]"));
  table.Add(LimiterSpec("window.take", -4, take, WindowTakeCommand,
                        "Counts units in a fixed window that starts at the first request.",
                        "key limit window [COST n|REFUND n] [HEADERS [POLICY name]]"));
  table.Add(LimiterSpec("sliding.take", -4, take, SlidingTakeCommand,
                        "Counts units in an exact sliding window (at most 10000 per window).",
                        "key limit window [COST n|REFUND n] [HEADERS [POLICY name]]"));
  table.Add(LimiterSpec("conc.acquire", -4, take, ConcAcquireCommand,
                        "Acquires one of `limit` concurrency slots for a lease.",
                        "key limit lease [ID token]"));
  table.Add(LimiterSpec("conc.release", 3, kWrite | kFast, ConcReleaseCommand,
                        "Releases a concurrency slot held by a token.", "key token"));
  RegisterLimitsTakeCommand(table);
}

}  // namespace sluice::server
