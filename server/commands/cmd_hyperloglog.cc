// HyperLogLog commands: PFADD, PFCOUNT, PFMERGE, on strings in Redis's exact HLL representation
// (storage/types/hyperloglog.h), so the stored bytes and the counts are Redis's.
#include <optional>
#include <string>

#include "server/commands/commands.h"
#include "server/commands/notify_events.h"
#include "server/commands/replies.h"
#include "server/core/args.h"
#include "server/core/client_state.h"
#include "server/core/errors.h"
#include "sluice/transaction.h"

namespace sluice::server {

namespace {

// PFADD key [element ...]: 1 when the HLL changed (or was created), else 0.
void PfAddCommand(CommandContext& ctx, Args args) {
  const bool was_missing = MissingForNew(ctx, args[1]);
  Result<bool> r = ctx.txn().PfAdd(ctx.client.db, args[1], args.subspan(2));
  if (r.ok() && *r) NotifyWrite(ctx, kNotifyString, "pfadd", args[1], was_missing);
  ReplyBool(ctx, r);
}

// PFCOUNT key [key ...]: one key's (cached) count, or the count of the union.
void PfCountCommand(CommandContext& ctx, Args args) {
  ReplyInteger(ctx, ctx.txn().PfCount(ctx.client.db, args.subspan(1)));
}

// PFMERGE destkey [sourcekey ...]
void PfMergeCommand(CommandContext& ctx, Args args) {
  const bool was_missing = MissingForNew(ctx, args[1]);
  Status s = ctx.txn().PfMerge(ctx.client.db, args[1], args.subspan(2));
  if (!s.ok()) return ReplyError(ctx.out, s);
  NotifyWrite(ctx, kNotifyString, "pfadd", args[1], was_missing);  // Redis names it pfadd
  ctx.out.Simple("OK");
}

// PFDEBUG GETREG|DECODE|ENCODING|TODENSE key. Redis looks at the key before the subcommand.
void PfDebugCommand(CommandContext& ctx, Args args) {
  using Op = Store::Transaction::PfDebugOp;
  std::optional<Op> op;
  if (EqualsIgnoreCase(args[1], "getreg")) op = Op::kGetReg;
  if (EqualsIgnoreCase(args[1], "decode")) op = Op::kDecode;
  if (EqualsIgnoreCase(args[1], "encoding")) op = Op::kEncoding;
  if (EqualsIgnoreCase(args[1], "todense")) op = Op::kToDense;
  auto r = ctx.txn().PfDebug(ctx.client.db, args[2], op.value_or(Op::kCheck));
  if (!r.ok()) {
    return ReplyError(ctx.out, r.status().code() == Code::kNoSuchKey ? PfDebugNoKey() : r.status());
  }
  if (!op) return ReplyError(ctx.out, PfDebugUnknown(args[1]));
  switch (*op) {
    case Op::kGetReg:
      ctx.out.Array(r->registers.size());
      for (int64_t v : r->registers) ctx.out.Integer(v);
      return;
    case Op::kDecode:
      return ctx.out.Bulk(r->text);
    case Op::kEncoding:
      return ctx.out.Simple(r->text);
    default:
      return ctx.out.Integer(r->converted ? 1 : 0);
  }
}

// PFSELFTEST: Redis checks its HyperLogLog code in place. Sluice's HyperLogLog (byte-identical
// to Redis's, storage/types/hyperloglog.*) is checked by its unit tests at build time, so the
// command answers OK as a passing Redis does.
void PfSelfTestCommand(CommandContext& ctx, Args) { ctx.out.Simple("OK"); }

void Add(CommandTable& table, std::string name, int arity, uint32_t flags, KeyRange keys,
         Handler handler, std::string summary, std::string hint) {
  table.Add(MakeSpec("hyperloglog", std::move(name), arity, flags, keys, handler,
                     std::move(summary), "2.8.9", std::move(hint)));
}

}  // namespace

void RegisterHyperLogLogCommands(CommandTable& table) {
  Add(table, "pfadd", -2, kWrite | kDenyOom | kFast, {1, 1, 1}, PfAddCommand,
      "Adds the specified elements to the specified HyperLogLog.", "key [element [element ...]]");
  // Read-only as in Redis, though a stale cached count is written back (PfCount claims the key).
  Add(table, "pfcount", -2, kReadOnly | kMayReplicate, {1, -1, 1}, PfCountCommand,
      "Return the approximated cardinality of the set(s) observed by the HyperLogLog at key(s).",
      "key [key ...]");
  Add(table, "pfmerge", -2, kWrite | kDenyOom, {1, -1, 1}, PfMergeCommand,
      "Merge N different HyperLogLogs into a single one.", "destkey [sourcekey [sourcekey ...]]");
  Add(table, "pfselftest", 1, kAdmin, {}, PfSelfTestCommand,
      "An internal command for testing HyperLogLog values", "");
  Add(table, "pfdebug", 3, kWrite | kDenyOom | kAdmin, {2, 2, 1}, PfDebugCommand,
      "Internal commands for debugging HyperLogLog values", "subcommand key");
}

}  // namespace sluice::server
