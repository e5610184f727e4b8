// Stream consumer-group commands: XGROUP CREATE|SETID|DESTROY|CREATECONSUMER|DELCONSUMER, XACK,
// XPENDING, XCLAIM, XAUTOCLAIM. Arguments are checked in Redis 7.0's order (options, the key's
// type, the key and group, then IDs), so the same bad input gets the same error.
#include <optional>
#include <string>
#include <vector>

#include "server/commands/commands.h"
#include "server/commands/notify_events.h"
#include "server/commands/replies.h"
#include "server/commands/stream_args.h"
#include "server/commands/stream_propagate.h"
#include "server/core/args.h"
#include "server/core/client_state.h"
#include "server/core/errors.h"
#include "sluice/transaction.h"

namespace sluice::server {

namespace {

// "$" (nullopt: the stream's last ID) or an ID, strict unless `loose` (SETID takes "-"/"+").
Result<std::optional<StreamId>> GroupStartId(std::string_view arg, bool loose) {
  if (arg == "$") return std::optional<StreamId>();
  auto id = ParseStreamId(arg, 0, !loose);
  if (!id.ok()) return id.status();
  return std::optional<StreamId>(*id);
}

// XGROUP's options after the ID (CREATE: MKSTREAM, ENTRIESREAD; SETID: ENTRIESREAD).
struct GroupOptions {
  bool mkstream = false;
  int64_t entries_read = -1;
};
bool ParseGroupOptions(CommandContext& ctx, Args args, bool create, bool setid, GroupOptions* out) {
  for (size_t i = 5; i < args.size();) {
    if (create && EqualsIgnoreCase(args[i], "mkstream")) {
      out->mkstream = true;
      ++i;
    } else if ((create || setid) && EqualsIgnoreCase(args[i], "entriesread") &&
               i + 1 < args.size()) {
      auto n = ParseInt64(args[i + 1]);
      if (!n) return ReplyError(ctx.out, NotAnInteger()), false;
      if (*n < -1) return ReplyError(ctx.out, EntriesReadNegative()), false;
      out->entries_read = *n;
      i += 2;
    } else {
      return ReplyError(ctx.out, SubcommandSyntax("xgroup", args[1])), false;
    }
  }
  return true;
}

// The checks every XGROUP subcommand makes first: options, the key's type, the key (unless
// MKSTREAM), the group (for SETID, CREATECONSUMER, DELCONSUMER). False after replying.
bool GroupPreamble(CommandContext& ctx, Args args, GroupOptions* o) {
  const bool create = EqualsIgnoreCase(args[1], "create");
  const bool setid = EqualsIgnoreCase(args[1], "setid");
  if (!ParseGroupOptions(ctx, args, create, setid, o)) return false;
  auto probe = ctx.txn().XGroupProbe(ctx.client.db, args[2], args[3]);
  if (!probe.ok()) return ReplyError(ctx.out, probe.status()), false;
  if (o->mkstream) return true;
  if (*probe == StreamGroupProbe::kNoKey) return ReplyError(ctx.out, XGroupNeedsKey()), false;
  if (*probe == StreamGroupProbe::kNoGroup && !create && !EqualsIgnoreCase(args[1], "destroy")) {
    return ReplyError(ctx.out, NoGroupForKey(args[3], args[2])), false;
  }
  return true;
}

void XGroupCreateCommand(CommandContext& ctx, Args args) {
  GroupOptions o;
  if (!GroupPreamble(ctx, args, &o)) return;
  if (args.size() > 8) return ReplyError(ctx.out, SubcommandSyntax("xgroup", args[1]));
  auto id = GroupStartId(args[4], false);
  if (!id.ok()) return ReplyError(ctx.out, id.status());
  const bool was_missing = MissingForNew(ctx, args[2]);
  auto r = ctx.txn().XGroupCreate(ctx.client.db, args[2], args[3], *id, o.mkstream, o.entries_read);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  // MKSTREAM's new stream fires "new" even when the group then exists (it cannot: new key).
  if (was_missing && KeyLive(ctx, args[2])) {
    NotifyKeyspaceEvent(kNotifyNew, "new", ctx.client.db, args[2]);
  }
  if (*r == StreamError::kGroupExists) return ReplyError(ctx.out, BusyGroup());
  NotifyKeyspaceEvent(kNotifyStream, "xgroup-create", ctx.client.db, args[2]);
  ctx.out.Simple("OK");
}

void XGroupSetIdCommand(CommandContext& ctx, Args args) {
  GroupOptions o;
  if (!GroupPreamble(ctx, args, &o)) return;
  if (args.size() != 5 && args.size() != 7) {
    return ReplyError(ctx.out, SubcommandSyntax("xgroup", args[1]));
  }
  auto id = GroupStartId(args[4], true);
  if (!id.ok()) return ReplyError(ctx.out, id.status());
  Status s = ctx.txn().XGroupSetId(ctx.client.db, args[2], args[3], *id, o.entries_read);
  if (!s.ok()) return ReplyError(ctx.out, s);
  NotifyKeyspaceEvent(kNotifyStream, "xgroup-setid", ctx.client.db, args[2]);
  ctx.out.Simple("OK");
}

void XGroupDestroyCommand(CommandContext& ctx, Args args) {
  GroupOptions o;
  if (!GroupPreamble(ctx, args, &o)) return;
  Result<int64_t> r = ctx.txn().XGroupDestroy(ctx.client.db, args[2], args[3]);
  if (r.ok() && *r > 0) {
    NotifyKeyspaceEvent(kNotifyStream, "xgroup-destroy", ctx.client.db, args[2]);
  }
  ReplyInteger(ctx, r);
}

void XGroupCreateConsumerCommand(CommandContext& ctx, Args args) {
  GroupOptions o;
  if (!GroupPreamble(ctx, args, &o)) return;
  Result<int64_t> r = ctx.txn().XGroupCreateConsumer(ctx.client.db, args[2], args[3], args[4]);
  if (r.ok() && *r > 0) {
    NotifyKeyspaceEvent(kNotifyStream, "xgroup-createconsumer", ctx.client.db, args[2]);
  }
  ReplyInteger(ctx, r);
}

void XGroupDelConsumerCommand(CommandContext& ctx, Args args) {
  GroupOptions o;
  if (!GroupPreamble(ctx, args, &o)) return;
  // "xgroup-delconsumer" when the consumer existed (whatever it had pending), as Redis.
  bool existed = false;
  if (NotifyEnabled(kNotifyStream)) {
    auto consumers = ctx.txn().XInfoConsumers(ctx.client.db, args[2], args[3]);
    if (consumers.ok()) {
      for (const StreamConsumerInfo& c : *consumers) existed = existed || c.name == args[4];
    }
  }
  Result<int64_t> r = ctx.txn().XGroupDelConsumer(ctx.client.db, args[2], args[3], args[4]);
  if (r.ok() && existed) {
    NotifyKeyspaceEvent(kNotifyStream, "xgroup-delconsumer", ctx.client.db, args[2]);
  }
  ReplyInteger(ctx, r);
}

// XACK key group id [id ...]: 0 for a missing key or group, which Redis checks before the IDs.
// The op answers kNoSuchKey for either, so a well-formed XACK opens the group once; only a bad
// ID needs the probe, to know which reply comes first.
void XAckCommand(CommandContext& ctx, Args args) {
  std::vector<StreamId> ids;
  for (size_t i = 3; i < args.size(); ++i) {
    auto id = ParseStreamId(args[i], 0, true);
    if (!id.ok()) {
      auto probe = ctx.txn().XGroupProbe(ctx.client.db, args[1], args[2]);
      if (!probe.ok()) return ReplyError(ctx.out, probe.status());
      if (*probe != StreamGroupProbe::kFound) return ctx.out.Integer(0);
      return ReplyError(ctx.out, id.status());
    }
    ids.push_back(*id);
  }
  auto acked = ctx.txn().XAck(ctx.client.db, args[1], args[2], ids);
  if (!acked.ok() && acked.status().code() == Code::kNoSuchKey) return ctx.out.Integer(0);
  ReplyInteger(ctx, acked);
}

// The NOGROUP check XPENDING, XCLAIM and XAUTOCLAIM share; false after replying.
bool GroupExists(CommandContext& ctx, std::string_view key, std::string_view group) {
  auto probe = ctx.txn().XGroupProbe(ctx.client.db, key, group);
  if (!probe.ok()) return ReplyError(ctx.out, probe.status()), false;
  if (*probe != StreamGroupProbe::kFound) {
    return ReplyError(ctx.out, NoKeyOrGroup(key, group, false)), false;
  }
  return true;
}

void ReplyPendingSummary(CommandContext& ctx, const StreamPendingSummary& s) {
  ctx.out.Array(4);
  ctx.out.Integer(s.count);
  if (s.count == 0) {
    ctx.out.NullBulk();
    ctx.out.NullBulk();
    return ctx.out.NullArray();
  }
  ctx.out.Bulk(s.first.ToText());
  ctx.out.Bulk(s.last.ToText());
  ctx.out.Array(s.consumers.size());
  for (const auto& [name, n] : s.consumers) {
    ctx.out.Array(2);
    ctx.out.Bulk(name);
    ctx.out.Bulk(std::to_string(n));
  }
}

// XPENDING key group [[IDLE min-idle-time] start end count [consumer]]
void XPendingCommand(CommandContext& ctx, Args args) {
  const size_t argc = args.size();
  if (argc != 3 && (argc < 6 || argc > 9)) return ReplyError(ctx.out, SyntaxError());
  int64_t min_idle = 0, count = 0;
  StreamId start, end;
  std::optional<std::string_view> consumer;
  if (argc >= 6) {
    size_t at = 3;
    if (EqualsIgnoreCase(args[3], "idle")) {
      auto idle = ParseInt64(args[4]);
      if (!idle) return ReplyError(ctx.out, NotAnInteger());
      if (argc < 8) return ReplyError(ctx.out, SyntaxError());
      min_idle = *idle;
      at += 2;
    }
    auto n = ParseInt64(args[at + 2]);
    if (!n) return ReplyError(ctx.out, NotAnInteger());
    count = *n < 0 ? 0 : *n;
    auto s = ParseRangeStart(args[at]);
    if (!s.ok()) return ReplyError(ctx.out, s.status());
    auto e = ParseRangeEnd(args[at + 1]);
    if (!e.ok()) return ReplyError(ctx.out, e.status());
    start = *s;
    end = *e;
    if (at + 3 < argc) consumer = args[at + 3];
  }
  if (!GroupExists(ctx, args[1], args[2])) return;
  if (argc == 3) {
    auto r = ctx.txn().XPendingSummary(ctx.client.db, args[1], args[2]);
    if (!r.ok()) return ReplyError(ctx.out, r.status());
    return ReplyPendingSummary(ctx, *r);
  }
  auto r = ctx.txn().XPendingRange(ctx.client.db, args[1], args[2], min_idle, start, end, count,
                                   consumer);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  const int64_t now = ctx.txn().NowMs();
  ctx.out.Array(r->size());
  for (const auto& p : *r) {
    ctx.out.Array(4);
    ctx.out.Bulk(p.id.ToText());
    ctx.out.Bulk(p.consumer);
    ctx.out.Integer(std::max<int64_t>(0, now - p.delivery_ms));
    ctx.out.Integer(p.delivery_count);
  }
}

void ReplyClaimed(CommandContext& ctx, const std::vector<StreamEntry>& claimed, bool justid) {
  if (!justid) return ReplyStreamEntries(ctx.out, claimed);
  ctx.out.Array(claimed.size());
  for (const auto& e : claimed) ctx.out.Bulk(e.id.ToText());
}

// XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms] [TIME unix-ms] [RETRYCOUNT n]
// [FORCE] [JUSTID] [LASTID id]
void XClaimCommand(CommandContext& ctx, Args args) {
  if (!GroupExists(ctx, args[1], args[2])) return;
  auto min_idle = ParseInt64(args[4]);
  if (!min_idle) return ReplyError(ctx.out, XClaimInvalid("min-idle-time", "XCLAIM"));
  StreamClaimOptions o{};
  o.min_idle_ms = std::max<int64_t>(0, *min_idle);
  std::vector<StreamId> ids;
  size_t i = 5;
  for (; i < args.size(); ++i) {
    auto id = ParseStreamId(args[i], 0, true);
    if (!id.ok()) break;
    ids.push_back(*id);
  }
  const int64_t now = ctx.txn().NowMs();
  for (; i < args.size(); ++i) {
    const bool more = i + 1 < args.size();
    std::string_view opt = args[i];
    if (EqualsIgnoreCase(opt, "force")) {
      o.force = true;
    } else if (EqualsIgnoreCase(opt, "justid")) {
      o.justid = true;
    } else if ((EqualsIgnoreCase(opt, "idle") || EqualsIgnoreCase(opt, "time")) && more) {
      const bool idle = EqualsIgnoreCase(opt, "idle");
      auto v = ParseInt64(args[++i]);
      if (!v) {
        return ReplyError(ctx.out, XClaimInvalid(idle ? "IDLE option" : "TIME option", "XCLAIM"));
      }
      o.delivery_ms = idle ? now - *v : *v;
    } else if (EqualsIgnoreCase(opt, "retrycount") && more) {
      auto v = ParseInt64(args[++i]);
      if (!v) return ReplyError(ctx.out, XClaimInvalid("RETRYCOUNT option", "XCLAIM"));
      o.retry_count = *v;
    } else if (EqualsIgnoreCase(opt, "lastid") && more) {
      auto id = ParseStreamId(args[++i], 0, true);
      if (!id.ok()) return ReplyError(ctx.out, id.status());
      o.last_id = *id;
    } else {
      return ReplyError(ctx.out, XClaimUnrecognized(opt));
    }
  }
  StreamGroupChange change;
  auto r =
      ctx.txn().XClaim(ctx.client.db, args[1], args[2], args[3], ids, o, WantGroupChange(&change));
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  NotifyConsumerCreated(ctx, args[1], change.consumer_created);
  PropagateGroupChange(args[1], args[2], args[3], change, r->deleted);
  ReplyClaimed(ctx, r->claimed, o.justid);
}

// XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]
void XAutoClaimCommand(CommandContext& ctx, Args args) {
  auto min_idle = ParseInt64(args[4]);
  if (!min_idle) return ReplyError(ctx.out, XClaimInvalid("min-idle-time", "XAUTOCLAIM"));
  auto start = ParseRangeStart(args[5]);
  if (!start.ok()) return ReplyError(ctx.out, start.status());
  int64_t count = 100;
  bool justid = false;
  for (size_t i = 6; i < args.size(); ++i) {
    if (EqualsIgnoreCase(args[i], "count") && i + 1 < args.size()) {
      auto n = ParseInt64(args[++i]);
      // Redis bounds COUNT by LONG_MAX / 16 (the size of an ID times its attempts factor).
      if (!n || *n < 1 || *n > INT64_MAX / 16) return ReplyError(ctx.out, XAutoClaimCount());
      count = *n;
    } else if (EqualsIgnoreCase(args[i], "justid")) {
      justid = true;
    } else {
      return ReplyError(ctx.out, SyntaxError());
    }
  }
  if (!GroupExists(ctx, args[1], args[2])) return;
  StreamGroupChange change;
  auto r = ctx.txn().XAutoClaim(ctx.client.db, args[1], args[2], args[3],
                                std::max<int64_t>(0, *min_idle), *start, count, justid,
                                WantGroupChange(&change));
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  NotifyConsumerCreated(ctx, args[1], change.consumer_created);
  PropagateGroupChange(args[1], args[2], args[3], change, r->deleted);
  ctx.out.Array(3);
  ctx.out.Bulk(r->next.ToText());
  ReplyClaimed(ctx, r->claimed, justid);
  ctx.out.Array(r->deleted.size());
  for (StreamId id : r->deleted) ctx.out.Bulk(id.ToText());
}

void Add(CommandTable& table, std::string name, int arity, uint32_t flags, KeyRange keys,
         Handler handler, std::string summary, std::string since, std::string hint) {
  table.Add(MakeSpec("stream", std::move(name), arity, flags, keys, handler, std::move(summary),
                     std::move(since), std::move(hint)));
}

void XGroupHelpCommand(CommandContext& ctx, Args) {
  static constexpr const char* kLines[] = {
      "XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CREATE <key> <groupname> <id|$> [option]",
      "    Create a new consumer group. Options are:",
      "    * MKSTREAM",
      "      Create the empty stream if it does not exist.",
      "    * ENTRIESREAD entries_read",
      "      Set the group's entries_read counter (internal use).",
      "CREATECONSUMER <key> <groupname> <consumer>",
      "    Create a new consumer in the specified group.",
      "DELCONSUMER <key> <groupname> <consumer>",
      "    Remove the specified consumer.",
      "DESTROY <key> <groupname>",
      "    Remove the specified group.",
      "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
      "    Set the current group ID and entries_read counter.",
      "HELP",
      "    Prints this help.",
  };
  ctx.out.Array(std::size(kLines));
  for (const char* line : kLines) ctx.out.Simple(line);
}

}  // namespace

void RegisterStreamInfoCommands(CommandTable& table);  // cmd_stream_info.cc

void RegisterStreamGroupCommands(CommandTable& table) {
  constexpr KeyRange kOne{1, 1, 1};
  constexpr KeyRange kSecond{2, 2, 1};
  constexpr uint32_t kW = kWrite | kDenyOom;
  Add(table, "xgroup", -2, 0, KeyRange{}, nullptr, "A container for consumer groups commands",
      "5.0.0", "");
  Add(table, "xgroup|create", -5, kW, kSecond, XGroupCreateCommand, "Create a consumer group.",
      "5.0.0", "key group id|$ [MKSTREAM] [ENTRIESREAD entries-read]");
  Add(table, "xgroup|setid", -5, kWrite, kSecond, XGroupSetIdCommand,
      "Set a consumer group to an arbitrary last delivered ID value.", "5.0.0",
      "key group id|$ [ENTRIESREAD entries-read]");
  Add(table, "xgroup|destroy", 4, kWrite, kSecond, XGroupDestroyCommand,
      "Destroy a consumer group.", "5.0.0", "key group");
  Add(table, "xgroup|createconsumer", 5, kW, kSecond, XGroupCreateConsumerCommand,
      "Create a consumer in a consumer group.", "6.2.0", "key group consumer");
  Add(table, "xgroup|delconsumer", 5, kWrite, kSecond, XGroupDelConsumerCommand,
      "Delete a consumer from a consumer group.", "5.0.0", "key group consumer");
  Add(table, "xgroup|help", 2, kLoading | kStale, KeyRange{}, XGroupHelpCommand,
      "Show helpful text about the different subcommands", "5.0.0", "");
  Add(table, "xack", -4, kWrite | kFast, kOne, XAckCommand,
      "Marks a pending message as correctly processed, effectively removing it from the pending "
      "entries list of the consumer group. Return value of the command is the number of "
      "messages successfully acknowledged, that is, the IDs we were actually able to resolve in "
      "the PEL.",
      "5.0.0", "key group id [id ...]");
  Add(table, "xpending", -3, kReadOnly, kOne, XPendingCommand,
      "Return information and entries from a stream consumer group pending entries list, that "
      "are messages fetched but never acknowledged.",
      "5.0.0", "key group [[IDLE min-idle-time] start end count [consumer]]");
  Add(table, "xclaim", -6, kWrite | kFast, kOne, XClaimCommand,
      "Changes (or acquires) ownership of a message in a consumer group, as if the message was "
      "delivered to the specified consumer.",
      "5.0.0",
      "key group consumer min-idle-time id [id ...] [IDLE ms] [TIME unix-time-milliseconds] "
      "[RETRYCOUNT count] [FORCE] [JUSTID] [LASTID lastid]");
  Add(table, "xautoclaim", -6, kWrite | kFast, kOne, XAutoClaimCommand,
      "Changes (or acquires) ownership of messages in a consumer group, as if the messages were "
      "delivered to the specified consumer.",
      "6.2.0", "key group consumer min-idle-time start [COUNT count] [JUSTID]");
  RegisterStreamInfoCommands(table);
}

}  // namespace sluice::server
