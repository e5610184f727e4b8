// XREAD [COUNT count] [BLOCK milliseconds] STREAMS key [key ...] id [id ...]: entries after the
// given IDs, from every stream that has some; with BLOCK, parks the client until an XADD to one
// of the keys (server/core/blocking.h), "$" standing for each stream's last ID when it blocked.
// XREADGROUP GROUP group consumer [COUNT count] [BLOCK ms] [NOACK] STREAMS key ... id ...: the
// same through a consumer group, ">" for new entries, an ID for the consumer's history.
#include <string>
#include <vector>

#include "server/commands/commands.h"
#include "server/commands/notify_events.h"
#include "server/commands/replies.h"
#include "server/commands/stream_args.h"
#include "server/commands/stream_propagate.h"
#include "server/core/args.h"
#include "server/core/blocking.h"
#include "server/core/client_state.h"
#include "server/core/errors.h"
#include "sluice/transaction.h"

namespace sluice::server {

namespace {

// Redis's XREAD_BLOCKED_DEFAULT_COUNT: a woken XREAD without COUNT returns at most this many.
constexpr int64_t kBlockedDefaultCount = 1000;

// Redis's xreadGetKeys: the keys are the first half of what follows STREAMS.
void XReadKeys(Args args, std::vector<int>* positions) {
  size_t streams = 0;
  for (size_t i = 1; i < args.size(); ++i) {
    if (EqualsIgnoreCase(args[i], "block") || EqualsIgnoreCase(args[i], "count")) {
      ++i;
    } else if (EqualsIgnoreCase(args[i], "group")) {
      i += 2;
    } else if (EqualsIgnoreCase(args[i], "noack")) {
      continue;
    } else {
      if (EqualsIgnoreCase(args[i], "streams")) streams = i;
      break;
    }
  }
  if (streams == 0) return;
  const size_t num = args.size() - streams - 1;
  if (num == 0 || num % 2 != 0) return;
  for (size_t k = 0; k < num / 2; ++k) positions->push_back(static_cast<int>(streams + 1 + k));
}

struct XReadArgs {
  bool xreadgroup = false;
  std::string_view group, consumer;  // XREADGROUP's GROUP
  bool has_group = false;
  bool noack = false;
  int64_t timeout_ms = -1;  // -1: no BLOCK
  int64_t count = 0;
  size_t streams_at = 0;  // first key's position
  size_t n = 0;           // number of streams
};

// The options before STREAMS, in Redis's order of checks; false after replying an error.
bool ParseXReadOptions(CommandContext& ctx, Args args, XReadArgs* out) {
  for (size_t i = 1; i < args.size(); ++i) {
    const size_t more = args.size() - i - 1;
    std::string_view o = args[i];
    if (EqualsIgnoreCase(o, "block") && more > 0) {
      // Redis refuses BLOCK in a script as soon as it sees it (in MULTI it answers at once).
      if (ctx.from_script) return ReplyError(ctx.out, BlockFromScript(args[0])), false;
      auto ms = ParseInt64(args[++i]);
      if (!ms) return ReplyError(ctx.out, TimeoutNotInteger()), false;
      if (*ms < 0) return ReplyError(ctx.out, TimeoutNegative()), false;
      out->timeout_ms = *ms;
    } else if (EqualsIgnoreCase(o, "count") && more > 0) {
      auto n = ParseInt64(args[++i]);
      if (!n) return ReplyError(ctx.out, NotAnInteger()), false;
      out->count = *n < 0 ? 0 : *n;
    } else if (EqualsIgnoreCase(o, "streams") && more > 0) {
      out->streams_at = i + 1;
      if ((args.size() - out->streams_at) % 2 != 0) {
        return ReplyError(ctx.out, XReadUnbalanced()), false;
      }
      out->n = (args.size() - out->streams_at) / 2;
      break;
    } else if (EqualsIgnoreCase(o, "group") && more >= 2) {
      if (!out->xreadgroup) return ReplyError(ctx.out, XReadOnlyGroupOption("GROUP")), false;
      out->group = args[i + 1];
      out->consumer = args[i + 2];
      out->has_group = true;
      i += 2;
    } else if (EqualsIgnoreCase(o, "noack")) {
      if (!out->xreadgroup) return ReplyError(ctx.out, XReadOnlyGroupOption("NOACK")), false;
      out->noack = true;
    } else {
      return ReplyError(ctx.out, SyntaxError()), false;
    }
  }
  if (out->streams_at == 0) return ReplyError(ctx.out, SyntaxError()), false;
  if (out->xreadgroup && !out->has_group) {
    return ReplyError(ctx.out, XReadGroupNeedsGroup()), false;
  }
  return true;
}

// XREADGROUP's per-key checks, in Redis's order: the key's type, the group, then the ID (">"
// is nullopt). False after replying an error.
bool CheckGroupStream(CommandContext& ctx, const XReadArgs& a, std::string_view key,
                      std::string_view arg, std::optional<StreamId>* history) {
  auto probe = ctx.txn().XGroupProbe(ctx.client.db, key, a.group);
  // Woken while parked: as Redis, a stream deleted (or replaced by another type) and a group
  // destroyed since the client blocked have their own errors.
  const bool woken = BlockRetrying(ctx);
  if (!probe.ok()) {
    const bool replaced = probe.status().code() == Code::kWrongType && woken;
    return ReplyError(ctx.out, replaced ? BlockedStreamDeleted() : probe.status()), false;
  }
  if (*probe != StreamGroupProbe::kFound) {
    if (woken) {
      return ReplyError(ctx.out, *probe == StreamGroupProbe::kNoKey ? BlockedStreamDeleted()
                                                                    : BlockedGroupDestroyed()),
             false;
    }
    return ReplyError(ctx.out, NoKeyOrGroup(key, a.group, /*xreadgroup=*/true)), false;
  }
  if (arg == "$") return ReplyError(ctx.out, XReadGroupDollar()), false;
  if (arg == ">") {
    history->reset();
    return true;
  }
  auto id = ParseStreamId(arg, 0, true);
  if (!id.ok()) return ReplyError(ctx.out, id.status()), false;
  // Redis keeps ">" as the largest ID, so that ID given explicitly is ">" too.
  if (*id == StreamId::Max()) {
    history->reset();
  } else {
    *history = *id;
  }
  return true;
}

void XReadCore(CommandContext& ctx, Args args, bool xreadgroup) {
  XReadArgs a;
  a.xreadgroup = xreadgroup;
  if (!ParseXReadOptions(ctx, args, &a)) return;
  Args keys = args.subspan(a.streams_at, a.n);
  std::vector<StreamId> after(a.n);
  std::vector<size_t> dollars;
  std::vector<std::optional<StreamId>> history(a.n);
  // One stream read with ">", not woken (the common consumer's call): the read's own open of
  // the stream and group answers what the probe would, in the same order, so it is skipped.
  const bool probe_skipped =
      xreadgroup && a.n == 1 && args[a.streams_at + 1] == ">" && !BlockRetrying(ctx);
  for (size_t i = 0; i < a.n && !probe_skipped; ++i) {
    std::string_view arg = args[a.streams_at + a.n + i];
    if (xreadgroup) {
      if (!CheckGroupStream(ctx, a, keys[i], arg, &history[i])) return;
      continue;
    }
    auto info = ctx.txn().XInfoStream(ctx.client.db, keys[i]);
    // A woken XREAD whose key now holds another type keeps waiting (as Redis): skipped below.
    const bool other_type =
        !info.ok() && info.status().code() == Code::kWrongType && BlockRetrying(ctx);
    if (!info.ok() && !other_type) return ReplyError(ctx.out, info.status());
    if (arg == "$") {
      after[i] = !other_type && info->has_value() ? (*info)->last_id : StreamId{};
      dollars.push_back(i);
      continue;
    }
    if (arg == ">") return ReplyError(ctx.out, XReadGreaterThanId());
    auto id = ParseStreamId(arg, 0, true);
    if (!id.ok()) return ReplyError(ctx.out, id.status());
    after[i] = *id;
  }
  const int64_t count = a.count == 0 && BlockRetrying(ctx) ? kBlockedDefaultCount : a.count;
  std::vector<std::pair<size_t, std::vector<StreamEntry>>> served;
  for (size_t i = 0; i < a.n && xreadgroup; ++i) {
    StreamGroupChange change;
    auto r = ctx.txn().XReadGroup(ctx.client.db, keys[i], a.group, a.consumer, history[i], count,
                                  a.noack, WantGroupChange(&change));
    // kNoSuchKey (no stream, or no group) reaches here only when the probe was skipped.
    if (!r.ok() && r.status().code() == Code::kNoSuchKey) {
      return ReplyError(ctx.out, NoKeyOrGroup(keys[i], a.group, /*xreadgroup=*/true));
    }
    if (!r.ok()) return ReplyError(ctx.out, r.status());
    NotifyConsumerCreated(ctx, keys[i], change.consumer_created);
    PropagateGroupChange(keys[i], a.group, a.consumer, change, {});
    if (r->has_value()) served.emplace_back(i, std::move(**r));
  }
  for (size_t i = 0; i < a.n && !xreadgroup; ++i) {
    StreamId start = after[i];
    if (!start.Increment()) continue;
    auto r = ctx.txn().XRange(ctx.client.db, keys[i], start, StreamId::Max(), false, count);
    if (!r.ok()) {
      if (r.status().code() == Code::kWrongType && BlockRetrying(ctx)) continue;
      return ReplyError(ctx.out, r.status());
    }
    if (!r->empty()) served.emplace_back(i, std::move(*r));
  }
  if (served.empty()) {
    if (a.timeout_ms >= 0) {
      for (size_t i : dollars) BlockRewriteArg(ctx, a.streams_at + a.n + i, after[i].ToString());
      if (BlockClient(ctx, keys, BlockTimeout{a.timeout_ms})) return;
    }
    return ctx.out.NullArray();
  }
  // RESP2: an array of [key, entries] pairs; RESP3: a map of key -> entries.
  if (ctx.client.resp == 2) {
    ctx.out.Array(served.size());
  } else {
    ctx.out.Map(served.size());
  }
  for (auto& [i, entries] : served) {
    if (ctx.client.resp == 2) ctx.out.Array(2);
    ctx.out.Bulk(keys[i]);
    ReplyStreamEntries(ctx.out, entries);
  }
}

}  // namespace

void XReadCommand(CommandContext& ctx, Args args) { XReadCore(ctx, args, false); }
void XReadGroupCommand(CommandContext& ctx, Args args) { XReadCore(ctx, args, true); }

void RegisterStreamReadCommands(CommandTable& table) {
  CommandSpec spec = MakeSpec(
      "stream", "xread", -4, kReadOnly | kBlocking, KeyRange{}, XReadCommand,
      "Return never seen elements in multiple streams, with IDs greater than the ones reported by "
      "the caller for each stream. Can block.",
      "5.0.0", "[COUNT count] [BLOCK milliseconds] STREAMS key [key ...] id [id ...]");
  spec.find_keys = XReadKeys;
  table.Add(std::move(spec));
  CommandSpec group = MakeSpec(
      "stream", "xreadgroup", -7, kWrite | kBlocking, KeyRange{}, XReadGroupCommand,
      "Return new entries from a stream using a consumer group, or access the history of the "
      "pending entries for a given consumer. Can block.",
      "5.0.0",
      "GROUP group consumer [COUNT count] [BLOCK milliseconds] [NOACK] STREAMS key [key ...] id "
      "[id ...]");
  group.find_keys = XReadKeys;
  table.Add(std::move(group));
}

}  // namespace sluice::server
