// Stream commands: XADD, XRANGE, XREVRANGE, XLEN, XDEL, XTRIM, XSETID, XREAD (BLOCK included:
// server/core/blocking.h), XINFO STREAM. Each parses its arguments in Redis 7.0's order (so the
// same bad input gets the same error; stream_args.h), makes one call on ctx.txn() and replies.
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

void ReplyId(protocol::ReplyWriter& out, StreamId id) { out.Bulk(id.ToText()); }

// XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] *|id field value ...
void XAddCommand(CommandContext& ctx, Args args) {
  auto parsed = ParseAddOrTrimArgs(ctx, args, /*xadd=*/true);
  if (!parsed) return;
  const size_t fields_at = parsed->id_pos + 1;
  if (args.size() < fields_at + 2 || (args.size() - fields_at) % 2 != 0) {
    return ReplyError(ctx.out, WrongArity("xadd"));
  }
  const StreamAddOptions& o = parsed->options;
  if (o.mode == StreamAddOptions::IdMode::kExplicit && o.id.IsZero()) {
    return ReplyError(ctx.out, StreamIdZero());
  }
  // Keyspace events: "new" when the stream was created, "xadd", then "xtrim" when the add's
  // trimming removed entries, as Redis.
  const bool was_missing = MissingForNew(ctx, args[1]);
  auto r = ctx.txn().XAdd(ctx.client.db, args[1], o, args.subspan(fields_at));
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  switch (r->outcome) {
    case StreamAddReply::Outcome::kAdded:
      PropagateAddOrTrim(args, *parsed, r->id, r->trim);
      if (NotifyEnabled(kNotifyStream | kNotifyNew)) {
        NotifyWrite(ctx, kNotifyStream, "xadd", args[1], was_missing);
        if (r->trim.removed > 0) {
          NotifyKeyspaceEvent(kNotifyStream, "xtrim", ctx.client.db, args[1]);
        }
      }
      return ReplyId(ctx.out, r->id);
    case StreamAddReply::Outcome::kNoStream:
      return ctx.out.NullBulk();
    case StreamAddReply::Outcome::kIdTooSmall:
      return ReplyError(ctx.out, StreamIdTooSmall());
    case StreamAddReply::Outcome::kExhausted:
      return ReplyError(ctx.out, StreamExhausted());
  }
}

// XRANGE key start end [COUNT count]; XREVRANGE key end start [COUNT count].
void RangeCore(CommandContext& ctx, Args args, bool rev) {
  auto start = ParseRangeStart(rev ? args[3] : args[2]);
  if (!start.ok()) return ReplyError(ctx.out, start.status());
  auto end = ParseRangeEnd(rev ? args[2] : args[3]);
  if (!end.ok()) return ReplyError(ctx.out, end.status());
  int64_t count = -1;
  for (size_t i = 4; i < args.size(); ++i) {
    if (!EqualsIgnoreCase(args[i], "count") || i + 1 >= args.size()) {
      return ReplyError(ctx.out, SyntaxError());
    }
    auto n = ParseInt64(args[++i]);
    if (!n) return ReplyError(ctx.out, NotAnInteger());
    count = *n < 0 ? 0 : *n;
  }
  auto r = ctx.txn().XRange(ctx.client.db, args[1], *start, *end, rev, count < 0 ? 0 : count);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  // COUNT 0 on a stream is a null array in Redis 7.0; a missing key an empty one.
  if (count == 0) {
    auto type = ctx.txn().Type(ctx.client.db, args[1]);
    if (!type.ok()) return ReplyError(ctx.out, type.status());
    if (type->has_value()) return ctx.out.NullArray();
  }
  ReplyStreamEntries(ctx.out, *r);
}
void XRangeCommand(CommandContext& ctx, Args args) { RangeCore(ctx, args, false); }
void XRevRangeCommand(CommandContext& ctx, Args args) { RangeCore(ctx, args, true); }

void XLenCommand(CommandContext& ctx, Args args) {
  ReplyInteger(ctx, ctx.txn().XLen(ctx.client.db, args[1]));
}

// XDEL key id [id ...]: every ID is checked before anything is deleted.
void XDelCommand(CommandContext& ctx, Args args) {
  auto type = ctx.txn().Type(ctx.client.db, args[1]);
  if (!type.ok()) return ReplyError(ctx.out, type.status());
  if (!type->has_value()) return ctx.out.Integer(0);
  if (**type != ValueKind::kStream) return ReplyError(ctx.out, Status::WrongType());
  std::vector<StreamId> ids;
  for (size_t i = 2; i < args.size(); ++i) {
    auto id = ParseStreamId(args[i], 0, true);
    if (!id.ok()) return ReplyError(ctx.out, id.status());
    ids.push_back(*id);
  }
  Result<int64_t> r = ctx.txn().XDel(ctx.client.db, args[1], ids);
  if (r.ok() && *r > 0) NotifyKeyspaceEvent(kNotifyStream, "xdel", ctx.client.db, args[1]);
  ReplyInteger(ctx, r);
}

// XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count]
void XTrimCommand(CommandContext& ctx, Args args) {
  auto parsed = ParseAddOrTrimArgs(ctx, args, /*xadd=*/false);
  if (!parsed) return;
  auto r = ctx.txn().XTrim(ctx.client.db, args[1], parsed->options.trim);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  if (r->removed > 0) {  // else it wrote nothing, and sends nothing (as Redis)
    PropagateAddOrTrim(args, *parsed, std::nullopt, *r);
    NotifyKeyspaceEvent(kNotifyStream, "xtrim", ctx.client.db, args[1]);
  }
  ctx.out.Integer(r->removed);
}

// XSETID key last-id [ENTRIESADDED entries-added] [MAXDELETEDID max-deleted-id]
void XSetIdCommand(CommandContext& ctx, Args args) {
  auto id = ParseStreamId(args[2], 0, true);
  if (!id.ok()) return ReplyError(ctx.out, id.status());
  StreamSetIdOptions o{};
  o.last_id = *id;
  for (size_t i = 3; i < args.size(); i += 2) {
    const bool more = i + 1 < args.size();
    if (EqualsIgnoreCase(args[i], "entriesadded") && more) {
      auto n = ParseInt64(args[i + 1]);
      if (!n) return ReplyError(ctx.out, NotAnInteger());
      if (*n < 0) return ReplyError(ctx.out, XSetIdEntriesNegative());
      o.entries_added = *n;
    } else if (EqualsIgnoreCase(args[i], "maxdeletedid") && more) {
      auto max = ParseStreamId(args[i + 1], 0, true);
      if (!max.ok()) return ReplyError(ctx.out, max.status());
      if (*id < *max) return ReplyError(ctx.out, XSetIdBelowMaxDeleted());
      if (!max->IsZero()) o.max_deleted_id = *max;
    } else {
      return ReplyError(ctx.out, SyntaxError());
    }
  }
  auto r = ctx.txn().XSetId(ctx.client.db, args[1], o);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  switch (*r) {
    case StreamError::kNoKey:
      return ReplyError(ctx.out, Status::NoSuchKey());
    case StreamError::kSetIdSmallerThanTop:
      return ReplyError(ctx.out, XSetIdBelowTop());
    case StreamError::kSetIdEntriesAdded:
      return ReplyError(ctx.out, XSetIdEntriesBelowLength());
    default:
      NotifyKeyspaceEvent(kNotifyStream, "xsetid", ctx.client.db, args[1]);
      return ctx.out.Simple("OK");
  }
}

void Add(CommandTable& table, std::string name, int arity, uint32_t flags, KeyRange keys,
         Handler handler, std::string summary, std::string since, std::string hint,
         KeyFinder find_keys = nullptr) {
  CommandSpec spec = MakeSpec("stream", std::move(name), arity, flags, keys, handler,
                              std::move(summary), std::move(since), std::move(hint));
  spec.find_keys = find_keys;
  table.Add(std::move(spec));
}

}  // namespace

void RegisterStreamReadCommands(CommandTable& table);   // cmd_stream_read.cc
void RegisterStreamGroupCommands(CommandTable& table);  // cmd_stream_groups.cc

void RegisterStreamCommands(CommandTable& table) {
  constexpr KeyRange kOne{1, 1, 1};
  constexpr uint32_t kW = kWrite | kDenyOom;
  Add(table, "xadd", -5, kW | kFast, kOne, XAddCommand, "Appends a new entry to a stream", "5.0.0",
      "key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] *|id field value "
      "[field value ...]");
  Add(table, "xrange", -4, kReadOnly, kOne, XRangeCommand,
      "Return a range of elements in a stream, with IDs matching the specified IDs interval",
      "5.0.0", "key start end [COUNT count]");
  Add(table, "xrevrange", -4, kReadOnly, kOne, XRevRangeCommand,
      "Return a range of elements in a stream, with IDs matching the specified IDs interval, in "
      "reverse order (from greater to smaller IDs) compared to XRANGE",
      "5.0.0", "key end start [COUNT count]");
  Add(table, "xlen", 2, kReadOnly | kFast, kOne, XLenCommand,
      "Return the number of entries in a stream", "5.0.0", "key");
  Add(table, "xdel", -3, kWrite | kFast, kOne, XDelCommand,
      "Removes the specified entries from the stream. Returns the number of items actually "
      "deleted, that may be different from the number of IDs passed in case certain IDs do not "
      "exist.",
      "5.0.0", "key id [id ...]");
  Add(table, "xtrim", -4, kWrite, kOne, XTrimCommand,
      "Trims the stream to (approximately if '~' "
      "is passed) a certain size",
      "5.0.0", "key MAXLEN|MINID [=|~] threshold [LIMIT count]");
  Add(table, "xsetid", -3, kW | kFast, kOne, XSetIdCommand,
      "An internal command for replicating stream values", "5.0.0",
      "key last-id [ENTRIESADDED entries-added] [MAXDELETEDID max-deleted-id]");
  RegisterStreamReadCommands(table);
  RegisterStreamGroupCommands(table);
}

}  // namespace sluice::server
