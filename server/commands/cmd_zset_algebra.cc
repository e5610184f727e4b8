// ZUNION, ZINTER, ZDIFF (WITHSCORES, WEIGHTS, AGGREGATE SUM|MIN|MAX), their STORE forms and
// ZINTERCARD (LIMIT), with Redis 7.0's order of checks: numkeys, then every input key's type
// (sorted sets and plain sets are inputs), then the options.
#include <cctype>
#include <string>
#include <utility>
#include <vector>

#include "server/commands/commands.h"
#include "server/commands/notify_events.h"
#include "server/commands/replies.h"
#include "server/commands/zset_args.h"
#include "server/core/args.h"
#include "server/core/client_state.h"
#include "server/core/errors.h"
#include "sluice/transaction.h"

namespace sluice::server {

namespace {

using Txn = Store::Transaction;
using SetOp = Txn::SetOp;
using ZAggregate = Txn::ZAggregate;

// The parsed command. `keys` is numkeys key arguments; `at` the position after them.
struct AlgebraCall {
  Txn::ZAlgebraArgs args;
  std::vector<double> weights;
  bool with_scores = false;
  int64_t limit = 0;  // ZINTERCARD
};

enum class Form { kReply, kStore, kCard };

// numkeys at args[at]: replies the error and returns nullopt when it is bad.
std::optional<size_t> ParseNumKeys(CommandContext& ctx, Args args, size_t at) {
  std::optional<int64_t> n = ParseInt64(args[at]);
  if (!n) {
    ReplyError(ctx.out, NotAnInteger());
    return std::nullopt;
  }
  if (*n < 1) {
    std::string name(args[0]);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    ReplyError(ctx.out, ZAtLeastOneKey(name));
    return std::nullopt;
  }
  if (*n > static_cast<int64_t>(args.size() - at - 1)) {
    ReplyError(ctx.out, SyntaxError());
    return std::nullopt;
  }
  return static_cast<size_t>(*n);
}

// WRONGTYPE unless every key is missing, a sorted set or a set (replied; false).
bool InputTypesOk(CommandContext& ctx, std::span<const std::string_view> keys) {
  for (std::string_view key : keys) {
    auto t = ctx.txn().Type(ctx.client.db, key);
    if (!t.ok()) {
      ReplyError(ctx.out, t.status());
      return false;
    }
    if (t->has_value() && **t != ValueKind::kZSet && **t != ValueKind::kSet) {
      ReplyError(ctx.out, Status::WrongType());
      return false;
    }
  }
  return true;
}

// The options after the keys, as zunionInterDiffGenericCommand reads them. Replies the error
// and returns false on bad input.
bool ParseOptions(CommandContext& ctx, Args args, size_t j, Form form, AlgebraCall* call) {
  const size_t n = call->args.keys.size();
  const bool weighted = call->args.op != SetOp::kDiff && form != Form::kCard;
  while (j < args.size()) {
    const size_t remaining = args.size() - j;
    if (weighted && remaining >= n + 1 && EqualsIgnoreCase(args[j], "weights")) {
      call->weights.clear();
      for (size_t i = 0; i < n; ++i) {
        std::optional<double> w = ParseScore(args[j + 1 + i]);
        if (!w) {
          ReplyError(ctx.out, WeightNotAFloat());
          return false;
        }
        call->weights.push_back(*w);
      }
      j += n + 1;
    } else if (weighted && remaining >= 2 && EqualsIgnoreCase(args[j], "aggregate")) {
      const std::string_view how = args[j + 1];
      if (EqualsIgnoreCase(how, "sum")) {
        call->args.aggregate = ZAggregate::kSum;
      } else if (EqualsIgnoreCase(how, "min")) {
        call->args.aggregate = ZAggregate::kMin;
      } else if (EqualsIgnoreCase(how, "max")) {
        call->args.aggregate = ZAggregate::kMax;
      } else {
        ReplyError(ctx.out, SyntaxError());
        return false;
      }
      j += 2;
    } else if (form == Form::kReply && EqualsIgnoreCase(args[j], "withscores")) {
      call->with_scores = true;
      j += 1;
    } else if (form == Form::kCard && remaining >= 2 && EqualsIgnoreCase(args[j], "limit")) {
      std::optional<int64_t> l = ParseInt64(args[j + 1]);
      if (!l || *l < 0) {
        ReplyError(ctx.out, LimitNegative());
        return false;
      }
      call->limit = *l;
      j += 2;
    } else {
      ReplyError(ctx.out, SyntaxError());
      return false;
    }
  }
  call->args.weights = call->weights;
  return true;
}

// numkeys is args[1] (args[2] for the STORE forms, args[1] being the destination).
void AlgebraCommand(CommandContext& ctx, Args args, SetOp op, Form form) {
  const size_t at = form == Form::kStore ? 2 : 1;
  std::optional<size_t> n = ParseNumKeys(ctx, args, at);
  if (!n) return;
  AlgebraCall call;
  call.args.op = op;
  call.args.keys = args.subspan(at + 1, *n);
  if (!InputTypesOk(ctx, call.args.keys)) return;
  if (!ParseOptions(ctx, args, at + 1 + *n, form, &call)) return;
  if (form == Form::kCard) {
    return ReplyInteger(ctx, ctx.txn().ZInterCard(ctx.client.db, call.args.keys, call.limit));
  }
  if (form == Form::kStore) {
    const bool existed = StoreDestinationExisted(ctx, args[1]);
    Result<int64_t> r = ctx.txn().ZSetAlgebraStore(ctx.client.db, args[1], call.args);
    NotifyStore(ctx, r, kNotifyZset,
                op == SetOp::kInter   ? "zinterstore"
                : op == SetOp::kUnion ? "zunionstore"
                                      : "zdiffstore",
                args[1], existed);
    return ReplyInteger(ctx, r);
  }
  auto r = ctx.txn().ZSetAlgebra(ctx.client.db, call.args);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  ReplyScoredMembers(ctx, *r, call.with_scores);
}

void ZUnionCommand(CommandContext& ctx, Args args) {
  AlgebraCommand(ctx, args, SetOp::kUnion, Form::kReply);
}
void ZInterCommand(CommandContext& ctx, Args args) {
  AlgebraCommand(ctx, args, SetOp::kInter, Form::kReply);
}
void ZDiffCommand(CommandContext& ctx, Args args) {
  AlgebraCommand(ctx, args, SetOp::kDiff, Form::kReply);
}
void ZUnionStoreCommand(CommandContext& ctx, Args args) {
  AlgebraCommand(ctx, args, SetOp::kUnion, Form::kStore);
}
void ZInterStoreCommand(CommandContext& ctx, Args args) {
  AlgebraCommand(ctx, args, SetOp::kInter, Form::kStore);
}
void ZDiffStoreCommand(CommandContext& ctx, Args args) {
  AlgebraCommand(ctx, args, SetOp::kDiff, Form::kStore);
}
void ZInterCardCommand(CommandContext& ctx, Args args) {
  AlgebraCommand(ctx, args, SetOp::kInter, Form::kCard);
}

// Keys of the forms without a destination: numkeys of them after args[1]; nothing for bad
// input.
void NumKeysAt1(Args args, std::vector<int>* positions) {
  if (args.size() < 2) return;
  std::optional<int64_t> n = ParseInt64(args[1]);
  if (!n || *n < 1 || *n > static_cast<int64_t>(args.size()) - 2) return;
  for (int64_t i = 0; i < *n; ++i) positions->push_back(static_cast<int>(2 + i));
}

// The STORE forms: the destination, then numkeys keys after args[2].
void DestAndNumKeysAt2(Args args, std::vector<int>* positions) {
  if (args.size() < 3) return;
  positions->push_back(1);
  std::optional<int64_t> n = ParseInt64(args[2]);
  if (!n || *n < 1 || *n > static_cast<int64_t>(args.size()) - 3) return;
  for (int64_t i = 0; i < *n; ++i) positions->push_back(static_cast<int>(3 + i));
}

void Add(CommandTable& table, std::string name, int arity, uint32_t flags, bool store,
         Handler handler, std::string summary, std::string since, std::string hint) {
  CommandSpec spec =
      MakeSpec("sorted-set", std::move(name), arity, flags, store ? KeyRange{1, 1, 1} : KeyRange{},
               handler, std::move(summary), std::move(since), std::move(hint));
  spec.find_keys = store ? DestAndNumKeysAt2 : NumKeysAt1;
  table.Add(std::move(spec));
}

}  // namespace

void RegisterZSetAlgebraCommands(CommandTable& table) {
  constexpr uint32_t kRo = kReadOnly;
  constexpr uint32_t kW = kWrite | kDenyOom;
  const std::string options = " [WEIGHTS weight [weight ...]] [AGGREGATE SUM|MIN|MAX]";
  Add(table, "zunion", -3, kRo, false, ZUnionCommand, "Add multiple sorted sets", "6.2.0",
      "numkeys key [key ...]" + options + " [WITHSCORES]");
  Add(table, "zinter", -3, kRo, false, ZInterCommand, "Intersect multiple sorted sets", "6.2.0",
      "numkeys key [key ...]" + options + " [WITHSCORES]");
  Add(table, "zdiff", -3, kRo, false, ZDiffCommand, "Subtract multiple sorted sets", "6.2.0",
      "numkeys key [key ...] [WITHSCORES]");
  Add(table, "zunionstore", -4, kW, true, ZUnionStoreCommand,
      "Add multiple sorted sets and store the resulting sorted set in a new key", "2.0.0",
      "destination numkeys key [key ...]" + options);
  Add(table, "zinterstore", -4, kW, true, ZInterStoreCommand,
      "Intersect multiple sorted sets and store the resulting sorted set in a new key", "2.0.0",
      "destination numkeys key [key ...]" + options);
  Add(table, "zdiffstore", -4, kW, true, ZDiffStoreCommand,
      "Subtract multiple sorted sets and store the resulting sorted set in a new key", "6.2.0",
      "destination numkeys key [key ...]");
  Add(table, "zintercard", -3, kRo, false, ZInterCardCommand,
      "Intersect multiple sorted sets and return the cardinality of the result", "7.0.0",
      "numkeys key [key ...] [LIMIT limit]");
}

}  // namespace sluice::server
