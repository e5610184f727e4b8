// XINFO STREAM | GROUPS | CONSUMERS: a stream's metadata, its groups (with Redis 7.0's
// entries-read and lag) and a group's consumers, as Redis 7.0 replies them.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "server/commands/commands.h"
#include "server/commands/replies.h"
#include "server/commands/stream_args.h"
#include "server/core/args.h"
#include "server/core/client_state.h"
#include "server/core/errors.h"
#include "sluice/transaction.h"

namespace sluice::server {

namespace {

// One entry as XINFO STREAM shows first-entry and last-entry, or a null.
void ReplyEdgeEntry(CommandContext& ctx, std::string_view key, bool last) {
  auto r = ctx.txn().XRange(ctx.client.db, key, StreamId{}, StreamId::Max(), last, 1);
  if (!r.ok() || r->empty()) return ctx.out.NullBulk();
  ctx.out.Array(2);
  ctx.out.Bulk((*r)[0].id.ToText());
  ctx.out.Array((*r)[0].fields.size());
  for (const auto& f : (*r)[0].fields) ctx.out.Bulk(f);
}

// The group's (or one consumer's) pending entries, at most `count` (0: all), in ID order.
std::vector<StreamPendingEntry> Pending(CommandContext& ctx, std::string_view key,
                                        std::string_view group, int64_t count,
                                        std::optional<std::string_view> consumer) {
  auto r = ctx.txn().XPendingRange(ctx.client.db, key, group, 0, StreamId{}, StreamId::Max(),
                                   count == 0 ? INT64_MAX : count, consumer);
  return r.ok() ? std::move(*r) : std::vector<StreamPendingEntry>{};
}

// XINFO STREAM key FULL [COUNT count]: the entries (COUNT, default 10, 0: all) and every group
// with its PEL and consumers, each PEL cut at COUNT, as Redis 7.0.
void ReplyStreamFull(CommandContext& ctx, std::string_view key, const StreamInfo& s,
                     int64_t count) {
  ctx.out.Map(9);
  ctx.out.Bulk("length");
  ctx.out.Integer(s.length);
  ctx.out.Bulk("radix-tree-keys");
  ctx.out.Integer(s.nodes);
  ctx.out.Bulk("radix-tree-nodes");
  ctx.out.Integer(s.nodes + 1);
  ctx.out.Bulk("last-generated-id");
  ctx.out.Bulk(s.last_id.ToText());
  ctx.out.Bulk("max-deleted-entry-id");
  ctx.out.Bulk(s.max_deleted_id.ToText());
  ctx.out.Bulk("entries-added");
  ctx.out.Integer(static_cast<int64_t>(s.entries_added));
  ctx.out.Bulk("recorded-first-entry-id");
  ctx.out.Bulk(s.first_id.ToText());
  ctx.out.Bulk("entries");
  auto entries = ctx.txn().XRange(ctx.client.db, key, StreamId{}, StreamId::Max(), false, count);
  ReplyStreamEntries(ctx.out, entries.ok() ? *entries : std::vector<StreamEntry>{});
  ctx.out.Bulk("groups");
  auto groups = ctx.txn().XInfoGroups(ctx.client.db, key);
  if (!groups.ok()) return ctx.out.Array(0);
  ctx.out.Array(groups->size());
  for (const StreamGroupInfo& g : *groups) {
    ctx.out.Map(7);
    ctx.out.Bulk("name");
    ctx.out.Bulk(g.name);
    ctx.out.Bulk("last-delivered-id");
    ctx.out.Bulk(g.last_delivered.ToText());
    ctx.out.Bulk("entries-read");
    if (g.entries_read == -1) {
      ctx.out.NullBulk();
    } else {
      ctx.out.Integer(g.entries_read);
    }
    ctx.out.Bulk("lag");
    if (g.lag) {
      ctx.out.Integer(*g.lag);
    } else {
      ctx.out.NullBulk();
    }
    ctx.out.Bulk("pel-count");
    ctx.out.Integer(g.pending);
    ctx.out.Bulk("pending");
    const std::vector<StreamPendingEntry> pel = Pending(ctx, key, g.name, count, std::nullopt);
    ctx.out.Array(pel.size());
    for (const StreamPendingEntry& p : pel) {
      ctx.out.Array(4);
      ctx.out.Bulk(p.id.ToText());
      ctx.out.Bulk(p.consumer);
      ctx.out.Integer(p.delivery_ms);
      ctx.out.Integer(p.delivery_count);
    }
    ctx.out.Bulk("consumers");
    auto consumers = ctx.txn().XInfoConsumers(ctx.client.db, key, g.name);
    if (!consumers.ok()) {
      ctx.out.Array(0);
      continue;
    }
    ctx.out.Array(consumers->size());
    for (const StreamConsumerInfo& c : *consumers) {
      ctx.out.Map(4);
      ctx.out.Bulk("name");
      ctx.out.Bulk(c.name);
      ctx.out.Bulk("seen-time");
      ctx.out.Integer(c.seen_ms);
      ctx.out.Bulk("pel-count");
      ctx.out.Integer(c.pending);
      ctx.out.Bulk("pending");
      const std::vector<StreamPendingEntry> own =
          Pending(ctx, key, g.name, count, std::string_view(c.name));
      ctx.out.Array(own.size());
      for (const StreamPendingEntry& p : own) {
        ctx.out.Array(3);
        ctx.out.Bulk(p.id.ToText());
        ctx.out.Integer(p.delivery_ms);
        ctx.out.Integer(p.delivery_count);
      }
    }
  }
}

// XINFO STREAM key [FULL [COUNT count]]: the key is looked up before the options, as Redis.
void XInfoStreamCommand(CommandContext& ctx, Args args) {
  auto info = ctx.txn().XInfoStream(ctx.client.db, args[2]);
  if (!info.ok()) return ReplyError(ctx.out, info.status());
  if (!info->has_value()) return ReplyError(ctx.out, Status::NoSuchKey());
  if (args.size() > 3) {
    if (!EqualsIgnoreCase(args[3], "full") || (args.size() != 4 && args.size() != 6) ||
        (args.size() == 6 && !EqualsIgnoreCase(args[4], "count"))) {
      return ReplyError(ctx.out, SubcommandSyntax("xinfo", args[1]));
    }
    int64_t count = 10;
    if (args.size() == 6) {
      std::optional<int64_t> n = ParseInt64(args[5]);
      if (!n) return ReplyError(ctx.out, NotAnInteger());
      count = *n < 0 ? 10 : *n;
    }
    return ReplyStreamFull(ctx, args[2], **info, count);
  }
  const StreamInfo& s = **info;
  ctx.out.Map(10);
  ctx.out.Bulk("length");
  ctx.out.Integer(s.length);
  // Redis's radix tree holds one key per listpack node (Sluice keeps the same nodes); its
  // inner node count depends on how the keys share prefixes, which Sluice does not model: it
  // reports the count of a tree whose keys share none (exact up to one key).
  ctx.out.Bulk("radix-tree-keys");
  ctx.out.Integer(s.nodes);
  ctx.out.Bulk("radix-tree-nodes");
  ctx.out.Integer(s.nodes + 1);
  ctx.out.Bulk("last-generated-id");
  ctx.out.Bulk(s.last_id.ToText());
  ctx.out.Bulk("max-deleted-entry-id");
  ctx.out.Bulk(s.max_deleted_id.ToText());
  ctx.out.Bulk("entries-added");
  ctx.out.Integer(static_cast<int64_t>(s.entries_added));
  ctx.out.Bulk("recorded-first-entry-id");
  ctx.out.Bulk(s.first_id.ToText());
  ctx.out.Bulk("groups");
  ctx.out.Integer(s.groups);
  ctx.out.Bulk("first-entry");
  ReplyEdgeEntry(ctx, args[2], false);
  ctx.out.Bulk("last-entry");
  ReplyEdgeEntry(ctx, args[2], true);
}

void XInfoGroupsCommand(CommandContext& ctx, Args args) {
  auto type = ctx.txn().Type(ctx.client.db, args[2]);
  if (!type.ok()) return ReplyError(ctx.out, type.status());
  if (!type->has_value()) return ReplyError(ctx.out, Status::NoSuchKey());
  auto r = ctx.txn().XInfoGroups(ctx.client.db, args[2]);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  ctx.out.Array(r->size());
  for (const auto& g : *r) {
    ctx.out.Map(6);
    ctx.out.Bulk("name");
    ctx.out.Bulk(g.name);
    ctx.out.Bulk("consumers");
    ctx.out.Integer(g.consumers);
    ctx.out.Bulk("pending");
    ctx.out.Integer(g.pending);
    ctx.out.Bulk("last-delivered-id");
    ctx.out.Bulk(g.last_delivered.ToText());
    ctx.out.Bulk("entries-read");
    if (g.entries_read == -1) {
      ctx.out.NullBulk();
    } else {
      ctx.out.Integer(g.entries_read);
    }
    ctx.out.Bulk("lag");
    if (g.lag) {
      ctx.out.Integer(*g.lag);
    } else {
      ctx.out.NullBulk();
    }
  }
}

void XInfoConsumersCommand(CommandContext& ctx, Args args) {
  auto probe = ctx.txn().XGroupProbe(ctx.client.db, args[2], args[3]);
  if (!probe.ok()) return ReplyError(ctx.out, probe.status());
  if (*probe == StreamGroupProbe::kNoKey) return ReplyError(ctx.out, Status::NoSuchKey());
  if (*probe == StreamGroupProbe::kNoGroup) {
    return ReplyError(ctx.out, NoGroupForKey(args[3], args[2]));
  }
  auto r = ctx.txn().XInfoConsumers(ctx.client.db, args[2], args[3]);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  const int64_t now = ctx.txn().NowMs();
  ctx.out.Array(r->size());
  for (const auto& c : *r) {
    ctx.out.Map(3);
    ctx.out.Bulk("name");
    ctx.out.Bulk(c.name);
    ctx.out.Bulk("pending");
    ctx.out.Integer(c.pending);
    ctx.out.Bulk("idle");
    ctx.out.Integer(std::max<int64_t>(0, now - c.seen_ms));
  }
}

void XInfoHelpCommand(CommandContext& ctx, Args) {
  static constexpr const char* kLines[] = {
      "XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CONSUMERS <key> <groupname>",
      "    Show consumers of <groupname>.",
      "GROUPS <key>",
      "    Show the stream consumer groups.",
      "STREAM <key> [FULL [COUNT <count>]",
      "    Show information about the stream.",
      "HELP",
      "    Prints this help.",
  };
  ctx.out.Array(std::size(kLines));
  for (const char* line : kLines) ctx.out.Simple(line);
}

void Add(CommandTable& table, std::string name, int arity, uint32_t flags, KeyRange keys,
         Handler handler, std::string summary, std::string hint) {
  table.Add(MakeSpec("stream", std::move(name), arity, flags, keys, handler, std::move(summary),
                     "5.0.0", std::move(hint)));
}

}  // namespace

void RegisterStreamInfoCommands(CommandTable& table) {
  constexpr KeyRange kSecond{2, 2, 1};
  Add(table, "xinfo", -2, 0, KeyRange{}, nullptr, "A container for stream introspection commands",
      "");
  Add(table, "xinfo|stream", -3, kReadOnly, kSecond, XInfoStreamCommand,
      "Get information about a stream", "key [FULL [COUNT count]]");
  Add(table, "xinfo|groups", 3, kReadOnly, kSecond, XInfoGroupsCommand,
      "List the consumer groups of a stream", "key");
  Add(table, "xinfo|help", 2, kLoading | kStale, KeyRange{}, XInfoHelpCommand,
      "Show helpful text about the different subcommands", "");
  Add(table, "xinfo|consumers", 4, kReadOnly, kSecond, XInfoConsumersCommand,
      "List the consumers in a consumer group", "key group");
}

}  // namespace sluice::server
