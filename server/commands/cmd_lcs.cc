// LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN]: the longest common subsequence of
// two strings, with Redis 7.0's replies. Redis checks the keys' types before the options.
#include <string>

#include "server/commands/commands.h"
#include "server/commands/replies.h"
#include "server/core/args.h"
#include "server/core/client_state.h"
#include "server/core/errors.h"
#include "sluice/transaction.h"

namespace sluice::server {

namespace {

struct LcsOptions {
  bool len = false;
  bool idx = false;
  bool with_match_len = false;
  int64_t min_match_len = 0;
};

Status ParseLcsOptions(Args args, LcsOptions* o) {
  for (size_t j = 3; j < args.size(); ++j) {
    const bool more = j + 1 < args.size();
    if (EqualsIgnoreCase(args[j], "idx")) {
      o->idx = true;
    } else if (EqualsIgnoreCase(args[j], "len")) {
      o->len = true;
    } else if (EqualsIgnoreCase(args[j], "withmatchlen")) {
      o->with_match_len = true;
    } else if (EqualsIgnoreCase(args[j], "minmatchlen") && more) {
      std::optional<int64_t> v = ParseInt64(args[++j]);
      if (!v) return NotAnInteger();
      o->min_match_len = *v < 0 ? 0 : *v;
    } else {
      return SyntaxError();
    }
  }
  if (o->len && o->idx) return LcsLenAndIdx();
  return Status::Ok();
}

// True when both keys are strings or missing; otherwise replies Redis's error.
bool KeysAreStrings(CommandContext& ctx, Args args) {
  for (int k = 1; k <= 2; ++k) {
    Result<std::optional<ValueKind>> type = ctx.txn().Type(ctx.client.db, args[k]);
    if (!type.ok()) {
      ReplyError(ctx.out, type.status());
      return false;
    }
    if (type->has_value() && **type != ValueKind::kString) {
      ReplyError(ctx.out, LcsNeedsStrings());
      return false;
    }
  }
  return true;
}

void ReplyMatches(CommandContext& ctx, const Store::Transaction::LcsReply& r, bool with_len) {
  ctx.out.Map(2);
  ctx.out.Bulk("matches");
  ctx.out.Array(r.matches.size());
  for (const auto& m : r.matches) {
    ctx.out.Array(with_len ? 3 : 2);
    ctx.out.Array(2);
    ctx.out.Integer(m.a_start);
    ctx.out.Integer(m.a_end);
    ctx.out.Array(2);
    ctx.out.Integer(m.b_start);
    ctx.out.Integer(m.b_end);
    if (with_len) ctx.out.Integer(m.a_end - m.a_start + 1);
  }
  ctx.out.Bulk("len");
  ctx.out.Integer(static_cast<int64_t>(r.lcs.size()));
}

void LcsCommand(CommandContext& ctx, Args args) {
  if (!KeysAreStrings(ctx, args)) return;
  LcsOptions o;
  if (Status s = ParseLcsOptions(args, &o); !s.ok()) return ReplyError(ctx.out, s);
  auto r = ctx.txn().Lcs(ctx.client.db, args[1], args[2], o.min_match_len);
  if (!r.ok()) {
    return ReplyError(ctx.out,
                      r.status().code() == Code::kWrongType ? LcsNeedsStrings() : r.status());
  }
  if (o.idx) return ReplyMatches(ctx, *r, o.with_match_len);
  if (o.len) return ctx.out.Integer(static_cast<int64_t>(r->lcs.size()));
  ctx.out.Bulk(r->lcs);
}

}  // namespace

void RegisterLcsCommand(CommandTable& table) {
  table.Add(MakeSpec("string", "lcs", -3, kReadOnly, {1, 2, 1}, LcsCommand,
                     "Find longest common substring", "7.0.0",
                     "key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN]"));
}

}  // namespace sluice::server
