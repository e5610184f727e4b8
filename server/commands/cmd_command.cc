// COMMAND introspection in Redis 7.0's reply shapes: COMMAND, COMMAND COUNT, COMMAND INFO,
// COMMAND DOCS, COMMAND LIST [FILTERBY ...], COMMAND HELP. Built from the one command table.
#include <algorithm>
#include <string>
#include <vector>

#include "server/commands/key_specs.h"
#include "server/commands/server_commands.h"
#include "server/core/acl_categories.h"
#include "server/core/acl_user.h"
#include "server/core/args.h"
#include "server/core/client_state.h"
#include "server/core/dispatcher.h"
#include "server/core/errors.h"
#include "server/core/errors_introspection.h"
#include "server/core/server_state.h"
#include "sluice/glob.h"

namespace sluice::server {

namespace {

bool IsSubcommand(const CommandSpec& spec) { return spec.name.find('|') != std::string::npos; }

// Subcommands of `parent`, in registration order.
std::vector<const CommandSpec*> SubcommandsOf(const CommandTable& table,
                                              const CommandSpec& parent) {
  std::vector<const CommandSpec*> subs;
  std::string prefix = parent.name + "|";
  for (const CommandSpec& spec : table.all()) {
    if (spec.name.compare(0, prefix.size(), prefix) == 0) subs.push_back(&spec);
  }
  return subs;
}

std::vector<const char*> FlagNames(uint32_t flags) {
  // Redis 7.0's order (addReplyCommandFlags); movablekeys and allow_busy come last (WriteInfo).
  static constexpr std::pair<CommandFlag, const char*> kNames[] = {
      {kWrite, "write"},
      {kReadOnly, "readonly"},
      {kDenyOom, "denyoom"},
      {kAdmin, "admin"},
      {kPubSub, "pubsub"},
      {kNoScript, "noscript"},
      {kBlocking, "blocking"},
      {kLoading, "loading"},
      {kStale, "stale"},
      {kSkipMonitor, "skip_monitor"},
      {kSkipSlowlog, "skip_slowlog"},
      {kAsking, "asking"},
      {kFast, "fast"},
      {kNoAuth, "no_auth"},
      {kNoMandatoryKeys, "no_mandatory_keys"},
      {kNoAsyncLoading, "no_async_loading"},
      {kNoMulti, "no_multi"},
  };
  if (flags & kWritesLibraries) flags |= kWrite;
  std::vector<const char*> names;
  for (const auto& [bit, name] : kNames) {
    if (flags & bit) names.push_back(name);
  }
  return names;
}

// The command's ACL categories (server/core/acl_categories.h), "@read" style, in Redis's order.
std::vector<std::string> Categories(const CommandSpec& spec) {
  std::vector<std::string> cats;
  const auto names = AclCategoryNames();
  for (size_t i = 0; i < names.size(); ++i) {
    if (spec.acl_categories & (1u << i)) cats.push_back("@" + std::string(names[i]));
  }
  return cats;
}

// One key specification, in Redis 7.0's shape (maps; flat arrays in RESP2).
void WriteKeySpec(protocol::ReplyWriter& out, const KeySpec& ks) {
  out.Map(3);
  out.Bulk("flags");
  out.Set(ks.flags.size());
  for (const std::string& f : ks.flags) out.Simple(f);
  out.Bulk("begin_search");
  out.Map(2);
  out.Bulk("type");
  const bool keyword = !ks.begin_keyword.empty();
  out.Bulk(keyword ? "keyword" : "index");
  out.Bulk("spec");
  if (keyword) {
    out.Map(2);
    out.Bulk("keyword");
    out.Bulk(ks.begin_keyword);
    out.Bulk("startfrom");
  } else {
    out.Map(1);
    out.Bulk("index");
  }
  out.Integer(ks.index);
  out.Bulk("find_keys");
  out.Map(2);
  out.Bulk("type");
  out.Bulk("range");
  out.Bulk("spec");
  out.Map(3);
  out.Bulk("lastkey");
  out.Integer(ks.lastkey);
  out.Bulk("keystep");
  out.Integer(ks.keystep);
  out.Bulk("limit");
  out.Integer(ks.limit);
}

// One COMMAND INFO entry: name, arity, flags, first key, last key, step, ACL categories, tips,
// key specs, subcommands.
void WriteInfo(protocol::ReplyWriter& out, const CommandTable& table, const CommandSpec& spec) {
  out.Array(10);
  out.Bulk(spec.name);
  out.Integer(spec.arity);
  std::vector<const char*> flags = FlagNames(spec.flags);
  if (spec.find_keys != nullptr) flags.push_back("movablekeys");
  if (spec.flags & kAllowBusy) flags.push_back("allow_busy");
  out.Set(flags.size());
  for (const char* f : flags) out.Simple(f);
  // A command whose only keys are "not_key" specs (the shard channels) shows the range they
  // imply, as Redis derives the legacy range from its key specs.
  int first = spec.first_key, last = spec.last_key, step = spec.key_step;
  if (first == 0 && spec.key_specs.size() == 1 && spec.key_specs[0].begin_keyword.empty() &&
      spec.key_specs[0].flags == std::vector<std::string>{"not_key"}) {
    const KeySpec& ks = spec.key_specs[0];
    first = ks.index;
    last = ks.lastkey < 0 ? ks.lastkey : ks.index + ks.lastkey;
    step = ks.keystep;
  }
  out.Integer(first);
  out.Integer(last);
  out.Integer(step);
  std::vector<std::string> cats = Categories(spec);
  out.Set(cats.size());
  for (const std::string& c : cats) out.Simple(c);
  out.Set(0);  // tips
  // RESP3 types as Redis 7.0's: key specs a set; subcommands an array, an empty set when none.
  out.Set(spec.key_specs.size());
  for (const KeySpec& ks : spec.key_specs) WriteKeySpec(out, ks);
  std::vector<const CommandSpec*> subs = SubcommandsOf(table, spec);
  if (subs.empty()) {
    out.Set(0);
  } else {
    out.Array(subs.size());
  }
  for (const CommandSpec* sub : subs) WriteInfo(out, table, *sub);
}

// One COMMAND DOCS value: a map with summary, since, group, arguments (the argument hint as one
// string argument, which is what redis-cli shows as the hint) and subcommands.
void WriteDocs(protocol::ReplyWriter& out, const CommandTable& table, const CommandSpec& spec) {
  std::vector<const CommandSpec*> subs = SubcommandsOf(table, spec);
  bool has_args = !spec.arguments_hint.empty() && subs.empty();
  out.Map(3 + (has_args ? 1 : 0) + (subs.empty() ? 0 : 1));
  out.Bulk("summary");
  out.Bulk(spec.summary);
  out.Bulk("since");
  out.Bulk(spec.since.empty() ? "1.0.0" : spec.since);
  out.Bulk("group");
  out.Bulk(spec.group.empty() ? "generic" : spec.group);
  if (has_args) {
    out.Bulk("arguments");
    out.Array(1);
    out.Map(2);
    out.Bulk("name");
    out.Bulk(spec.arguments_hint);
    out.Bulk("type");
    out.Bulk("string");
  }
  if (!subs.empty()) {
    out.Bulk("subcommands");
    out.Map(subs.size());
    for (const CommandSpec* sub : subs) {
      out.Bulk(sub->name);
      WriteDocs(out, table, *sub);
    }
  }
}

std::vector<const CommandSpec*> TopLevel(const CommandTable& table) {
  std::vector<const CommandSpec*> top;
  for (const CommandSpec& spec : table.all()) {
    if (!IsSubcommand(spec)) top.push_back(&spec);
  }
  return top;
}

void CommandAll(CommandContext& ctx, Args args) {
  const CommandTable& table = ctx.server.commands();
  if (args.size() >= 2) {
    return DispatchSubcommand(ctx, table, *table.Find("command"), args);
  }
  std::vector<const CommandSpec*> top = TopLevel(table);
  ctx.out.Array(top.size());
  for (const CommandSpec* spec : top) WriteInfo(ctx.out, table, *spec);
}

void CommandCount(CommandContext& ctx, Args) {
  ctx.out.Integer(static_cast<int64_t>(TopLevel(ctx.server.commands()).size()));
}

// COMMAND INFO [name ...]: nil for unknown names; every command when none is given.
void CommandInfo(CommandContext& ctx, Args args) {
  const CommandTable& table = ctx.server.commands();
  if (args.size() == 2) {
    std::vector<const CommandSpec*> top = TopLevel(table);
    ctx.out.Array(top.size());
    for (const CommandSpec* spec : top) WriteInfo(ctx.out, table, *spec);
    return;
  }
  ctx.out.Array(args.size() - 2);
  for (size_t i = 2; i < args.size(); ++i) {
    const CommandSpec* spec = table.Find(args[i]);
    if (spec == nullptr) {
      ctx.out.NullArray();
    } else {
      WriteInfo(ctx.out, table, *spec);
    }
  }
}

// COMMAND DOCS [name ...]: a map of name -> docs; unknown names are left out.
void CommandDocs(CommandContext& ctx, Args args) {
  const CommandTable& table = ctx.server.commands();
  std::vector<const CommandSpec*> specs;
  if (args.size() == 2) {
    specs = TopLevel(table);
  } else {
    for (size_t i = 2; i < args.size(); ++i) {
      if (const CommandSpec* spec = table.Find(args[i])) specs.push_back(spec);
    }
  }
  ctx.out.Map(specs.size());
  for (const CommandSpec* spec : specs) {
    ctx.out.Bulk(spec->name);
    WriteDocs(ctx.out, table, *spec);
  }
}

// The flags COMMAND GETKEYSANDFLAGS shows for the key at `index` (of the keys found): its key
// spec's when the command declares one per key, else those its ACL key permissions imply
// (Redis's: ACCESS reads, UPDATE/INSERT/DELETE write; server/core/acl_key_perms.h).
std::vector<std::string> KeyFlags(const CommandSpec& spec, size_t index) {
  if (spec.key_specs.size() == 1) return spec.key_specs.front().flags;
  const AclKeyPerms& perms = spec.acl_key_perms;
  const uint8_t p = perms.count == 0 ? 0 : perms.perms[std::min<size_t>(index, perms.count - 1)];
  if (p == kAclKeyRead) return {"RO", "access"};
  if (p == kAclKeyWrite) return {"RW", "update"};
  if (p == (kAclKeyRead | kAclKeyWrite)) return {"RW", "access", "update"};
  return {"RO"};
}

// COMMAND GETKEYS / GETKEYSANDFLAGS command [arg ...]: the key arguments, as the command table
// finds them (with their flags, Redis 7.0's [key, flags] pairs).
void GetKeysImpl(CommandContext& ctx, Args args, bool with_flags) {
  const CommandTable& table = ctx.server.commands();
  Args cmd = args.subspan(2);
  const CommandSpec* spec = table.Find(cmd[0]);
  if (spec != nullptr && cmd.size() >= 2 && SubcommandsOf(table, *spec).size() > 0) {
    // A container's unknown subcommand is an unknown command (Redis's lookupCommand).
    spec = table.Find(spec->name + "|" + std::string(cmd[1]));
  }
  if (spec == nullptr) return ReplyError(ctx.out, GetKeysInvalidCommand());
  if (!ArityOk(*spec, cmd.size())) {
    return ReplyError(ctx.out, GetKeysInvalidArity());
  }
  std::vector<int> positions;
  CommandKeyPositions(*spec, cmd, &positions);
  // Redis's own commands: their keys and flags from Redis's key specs (key_specs.h).
  RedisKeys found = FindRedisKeys(spec->name, cmd, positions);
  if (found.outcome == RedisKeys::kNotInTable) {
    if (positions.empty()) return ReplyError(ctx.out, GetKeysNoKeys());
    for (size_t i = 0; i < positions.size(); ++i) {
      found.keys.push_back({static_cast<size_t>(positions[i]), KeyFlags(*spec, i)});
    }
  } else if (found.outcome == RedisKeys::kNoKeyArgs) {
    return ReplyError(ctx.out, GetKeysNoKeys());
  } else if (found.outcome == RedisKeys::kInvalid) {
    return ReplyError(ctx.out, GetKeysInvalidArgs());
  }
  ctx.out.Array(found.keys.size());
  for (const FoundKey& key : found.keys) {
    if (!with_flags) {
      ctx.out.Bulk(cmd[key.pos]);
      continue;
    }
    ctx.out.Array(2);
    ctx.out.Bulk(cmd[key.pos]);
    ctx.out.Set(key.flags.size());
    for (const std::string& f : key.flags) ctx.out.Simple(f);
  }
}

void CommandGetKeys(CommandContext& ctx, Args args) { GetKeysImpl(ctx, args, false); }
void CommandGetKeysAndFlags(CommandContext& ctx, Args args) { GetKeysImpl(ctx, args, true); }

// COMMAND LIST [FILTERBY MODULE name | ACLCAT category | PATTERN pattern]
void CommandList(CommandContext& ctx, Args args) {
  const CommandTable& table = ctx.server.commands();
  enum class Filter { kNone, kModule, kAclCat, kPattern } filter = Filter::kNone;
  std::string_view value;
  if (args.size() == 5 && EqualsIgnoreCase(args[2], "FILTERBY")) {
    value = args[4];
    if (EqualsIgnoreCase(args[3], "MODULE")) {
      filter = Filter::kModule;
    } else if (EqualsIgnoreCase(args[3], "ACLCAT")) {
      filter = Filter::kAclCat;
    } else if (EqualsIgnoreCase(args[3], "PATTERN")) {
      filter = Filter::kPattern;
    } else {
      return ReplyError(ctx.out, SyntaxError());
    }
  } else if (args.size() != 2) {
    return ReplyError(ctx.out, SyntaxError());
  }
  std::vector<const std::string*> names;
  for (const CommandSpec& spec : table.all()) {
    bool keep = true;
    if (filter == Filter::kModule) keep = false;
    if (filter == Filter::kPattern) keep = GlobMatch(value, spec.name, true);
    if (filter == Filter::kAclCat) {
      keep = false;
      for (const std::string& c : Categories(spec)) {
        if (EqualsIgnoreCase(std::string_view(c).substr(1), value)) keep = true;
      }
    }
    if (keep) names.push_back(&spec.name);
  }
  ctx.out.Array(names.size());
  for (const std::string* name : names) ctx.out.Bulk(*name);
}

void CommandHelp(CommandContext& ctx, Args) {
  static constexpr const char* kLines[] = {
      "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "(no subcommand)",
      "    Return details about all commands.",
      "COUNT",
      "    Return the total number of commands in this server.",
      "LIST [FILTERBY (MODULE <module-name>|ACLCAT <category>|PATTERN <pattern>)]",
      "    Return a list of all commands in this server.",
      "INFO [<command-name> ...]",
      "    Return details about the specified commands, or all commands if none is given.",
      "DOCS [<command-name> ...]",
      "    Return documentation details about commands, or all commands if none is given.",
      "GETKEYS <full-command>",
      "    Return the keys from a full Redis command.",
      "GETKEYSANDFLAGS <full-command>",
      "    Return the keys and the access flags from a full Redis command.",
      "HELP",
      "    Prints this help.",
  };
  ctx.out.Array(std::size(kLines));
  for (const char* line : kLines) ctx.out.Simple(line);
}

}  // namespace

void RegisterCommandCommands(CommandTable& table) {
  constexpr uint32_t kFlags = kLoading | kStale;
  table.Add(ServerSpec("command", -1, kFlags, CommandAll,
                       "Returns detailed information about all "
                       "commands.",
                       "2.8.13", "[subcommand]"));
  table.Add(ServerSpec("command|count", 2, kFlags, CommandCount, "Returns a count of commands.",
                       "2.8.13", ""));
  table.Add(ServerSpec("command|info", -2, kFlags, CommandInfo,
                       "Returns information about one, multiple or all commands.", "2.8.13",
                       "[command-name [command-name ...]]"));
  table.Add(ServerSpec("command|docs", -2, kFlags, CommandDocs,
                       "Returns documentary information about one, multiple or all commands.",
                       "7.0.0", "[command-name [command-name ...]]"));
  table.Add(ServerSpec("command|getkeys", -4, kFlags, CommandGetKeys,
                       "Extract keys given a full Redis command", "2.8.13",
                       "command [arg [arg ...]]"));
  table.Add(ServerSpec("command|getkeysandflags", -4, kFlags, CommandGetKeysAndFlags,
                       "Extract keys and access flags given a full Redis command", "7.0.0",
                       "command [arg [arg ...]]"));
  table.Add(ServerSpec("command|list", -2, kFlags, CommandList, "Returns a list of command names.",
                       "7.0.0", "[FILTERBY MODULE module-name|ACLCAT category|PATTERN pattern]"));
  table.Add(ServerSpec("command|help", 2, kFlags, CommandHelp,
                       "Returns helpful text about the different subcommands.", "5.0.0", ""));
}

}  // namespace sluice::server
