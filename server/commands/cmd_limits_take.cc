// LIMITS.TAKE [COST n | REFUND n] [HEADERS] LIMIT key ALGO params [options] [LIMIT ...]
// Several limits in one atomic, all-or-nothing call (../shared/spec/LIMITERS.md, LIMITS.TAKE;
// user's page docs/limiters.md). The request is split into groups by one walker shared with the
// command's KeyFinder, so the keys the Dispatcher locks are exactly the keys the handler uses.
#include <string>
#include <string_view>
#include <vector>

#include "server/commands/commands.h"
#include "server/commands/limiter_args.h"
#include "server/commands/limiter_headers.h"
#include "server/commands/notify_events.h"
#include "server/core/args.h"
#include "server/core/client_state.h"
#include "server/core/errors.h"
#include "server/core/limiter_stats.h"
#include "server/core/server_state.h"
#include "sluice/limiter.h"
#include "sluice/store.h"

namespace sluice::server {
namespace {

// Options before the first LIMIT.
constexpr unsigned kTopOptions = kOptCost | kOptRefund | kOptHeaders;
// Every option keyword that may appear anywhere (the walker skips them with their values).
constexpr unsigned kAnyOption =
    kOptBurst | kOptCost | kOptDelay | kOptNoDelay | kOptRefund | kOptHeaders | kOptPolicy;
// LIMIT key ALGO count duration: the words of a group before its options.
constexpr size_t kGroupHead = 5;

bool IsLimit(std::string_view word) { return EqualsIgnoreCase(word, "LIMIT"); }

// From args[i], skips option keywords (and their values) until a LIMIT or the end. Words that
// are not options are skipped one at a time (the parser reports them).
size_t SkipOptions(Args args, size_t i) {
  while (i < args.size() && !IsLimit(args[i])) {
    const size_t span = OptionSpan(args, i, kAnyOption);
    i += span == 0 ? 1 : span;
  }
  return i < args.size() ? i : args.size();
}

// The end (exclusive) of the group whose LIMIT is at args[start].
size_t GroupEnd(Args args, size_t start) {
  if (start + kGroupHead >= args.size()) return args.size();
  return SkipOptions(args, start + kGroupHead);
}

// KeyFinder: the word after each group's LIMIT.
void LimitsTakeKeys(Args args, std::vector<int>* positions) {
  for (size_t i = SkipOptions(args, 1); i < args.size(); i = GroupEnd(args, i)) {
    if (i + 1 < args.size()) positions->push_back(static_cast<int>(i + 1));
  }
}

Status GroupError(size_t group, const std::string& message) {
  return Status::InvalidArgument("group " + std::to_string(group) + ": " + message);
}

// One parsed group.
struct Group {
  std::string_view key;
  LimitArgs args;
  std::string name;  // the RateLimit policy name
};

// Parses the group args[start, end) (args[start] is LIMIT) as group number `n` (1-based).
Status ParseGroup(Args args, size_t start, size_t end, size_t n, Group* g) {
  if (end - start < kGroupHead) {
    return GroupError(n, "wrong number of arguments (LIMIT key ALGO count duration [options])");
  }
  g->key = args[start + 1];
  std::optional<LimitAlgo> algo = ParseAlgo(args[start + 2]);
  if (!algo) {
    return GroupError(n, "unknown algorithm '" + std::string(args[start + 2].substr(0, 64)) +
                             "' (use GCRA, WINDOW, SLIDING or LEAKY)");
  }
  Args rest = args.subspan(start + 3, end - start - 3);
  Status s = ParseLimitArgs(*algo, rest, kOptPolicy | kTopOptions, &g->args);
  if (!s.ok()) return GroupError(n, s.message());
  for (auto [bit, word] :
       {std::pair{kOptCost, "COST"}, {kOptRefund, "REFUND"}, {kOptHeaders, "HEADERS"}}) {
    if (g->args.opts.has(bit)) {
      return GroupError(n, std::string(word) + " goes before the first LIMIT, for every group");
    }
  }
  g->name =
      g->args.opts.has(kOptPolicy) ? std::string(g->args.opts.policy) : "p" + std::to_string(n);
  return Status::Ok();
}

// The whole request: top options, then 1 to 16 groups with distinct keys.
Status ParseRequest(Args args, LimiterOptions* top, std::vector<Group>* groups) {
  const size_t first = SkipOptions(args, 1);
  Status s = ParseLimiterOptions(args.subspan(0, first), 1, kTopOptions, top);
  if (!s.ok()) return s;
  if (first >= args.size()) {
    return Status::InvalidArgument("missing LIMIT: give at least one LIMIT key ALGO ... group");
  }
  for (size_t i = first; i < args.size(); i = GroupEnd(args, i)) {
    if (groups->size() == limiter::kMaxLimitGroups) {
      return Status::InvalidArgument("too many groups: at most 16 LIMIT groups");
    }
    Group& g = groups->emplace_back();
    const size_t n = groups->size();
    s = ParseGroup(args, i, GroupEnd(args, i), n, &g);
    if (!s.ok()) return s;
    if (g.args.opts.has(kOptPolicy) && !top->has(kOptHeaders)) {
      return GroupError(n, PolicyWithoutHeaders().message());
    }
    for (size_t j = 0; j + 1 < n; ++j) {
      if ((*groups)[j].key == g.key) {
        return GroupError(n, "duplicate key (the same key as group " + std::to_string(j + 1) + ")");
      }
    }
  }
  return Status::Ok();
}

void WriteReply(CommandContext& ctx, const LimitsReply& r, const std::vector<Group>& groups,
                bool headers) {
  BeginDecision(ctx.out, r.decision, headers ? 3 : 2);
  FieldName(ctx.out, "binding");
  ctx.out.Integer(r.binding);
  FieldName(ctx.out, "limits");
  ctx.out.Array(r.groups.size());
  for (const limiter::Decision& d : r.groups) ReplyDecision(ctx.out, d);
  if (!headers) return;
  std::vector<HeaderPolicy> policies;
  for (const Group& g : groups) policies.push_back({g.name, g.args.quota, g.args.window_ns});
  FieldName(ctx.out, "headers");
  WriteHeaders(ctx.out, RateLimitHeaders(policies, r.groups, r.decision));
}

void LimitsTakeCommand(CommandContext& ctx, Args args) {
  LimiterOptions top;
  std::vector<Group> groups;
  Status s = ParseRequest(args, &top, &groups);
  if (!s.ok()) return ReplyError(ctx.out, s);
  std::vector<LimitGroup> refs;
  refs.reserve(groups.size());
  for (const Group& g : groups) refs.push_back({g.key, g.args.params});
  const bool refund = top.has(kOptRefund);
  // Keyspace notifications: when the operation wrote, each group's key (once, in order) as a
  // limiter write (NotifyLimiterWrite).
  std::vector<LimiterWriteWatch> watches;
  if (NotifyEnabled(kNotifyString | kNotifyGeneric | kNotifyNew)) {
    for (const Group& g : groups) watches.emplace_back(ctx, g.key);
  }
  Result<LimitsReply> r = refund ? ctx.txn().LimitsRefund(ctx.client.db, refs, top.refund)
                                 : ctx.txn().LimitsTake(ctx.client.db, refs, top.cost);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  for (size_t i = 0; i < watches.size(); ++i) {
    bool repeat = false;
    for (size_t j = 0; j < i; ++j) repeat = repeat || groups[j].key == groups[i].key;
    if (!repeat) watches[i].Fire(ctx, groups[i].key);
  }
  if (refund) {
    ctx.server.limiter_stats().RecordRefund(LimiterCommand::kLimitsTake);
  } else {
    ctx.server.limiter_stats().Record(LimiterCommand::kLimitsTake, r->decision.allowed);
  }
  WriteReply(ctx, *r, groups, top.has(kOptHeaders));
}

}  // namespace

void RegisterLimitsTakeCommand(CommandTable& table) {
  CommandSpec spec = MakeSpec(
      "rate-limit", "limits.take", -6, kWrite | kDenyOom | kFast, {}, LimitsTakeCommand,
      "Takes from several rate limiters at once: all of them or none (1 to 16 groups).", "0.2.0",
      "[COST n|REFUND n] [HEADERS] LIMIT key GCRA|WINDOW|SLIDING|LEAKY count duration "
      "[options] [LIMIT key ALGO count duration [options] ...]");
  spec.find_keys = LimitsTakeKeys;
  // The first group's key; INCOMPLETE (and the movablekeys flag) send cluster-aware clients to
  // COMMAND GETKEYS for the others, which LimitsTakeKeys answers.
  spec.key_specs.push_back(KeySpec{.flags = {"RW", "ACCESS", "UPDATE", "INCOMPLETE"},
                                   .index = 1,
                                   .begin_keyword = "LIMIT",
                                   .lastkey = 0,
                                   .keystep = 1,
                                   .limit = 0});
  table.Add(std::move(spec));
}

}  // namespace sluice::server
