// ACL and its subcommands (Redis 7.0.15): SETUSER, GETUSER, DELUSER, LIST, USERS, WHOAMI, CAT,
// GENPASS, LOG, DRYRUN, SAVE, LOAD, HELP. The users live in the AclRegistry
// (server/core/acl_registry.h); the gate checks them (server/core/acl_check.h).
#include <openssl/rand.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "server/commands/commands.h"
#include "server/commands/server_commands.h"
#include "server/core/acl_categories.h"
#include "server/core/acl_check.h"
#include "server/core/acl_registry.h"
#include "server/core/args.h"
#include "server/core/dispatcher.h"
#include "server/core/durable_file.h"
#include "server/core/errors.h"
#include "server/core/logging.h"
#include "server/core/server_state.h"

namespace sluice::server {

namespace {

std::vector<std::string> Strings(Args args, size_t from) {
  return std::vector<std::string>(args.begin() + static_cast<std::ptrdiff_t>(from), args.end());
}

// Closes every connection of the named users (Redis frees a deleted user's clients; ACL LOAD
// does the same for users it replaces).
void KillClientsOf(ServerState& server, const std::vector<std::string>& names) {
  if (names.empty()) return;
  server.clients().ForEachLocked([&](ClientRegistry::Entry& e) {
    for (const std::string& n : names) {
      if (e.client->user_name != n) continue;
      e.client->kill_requested.store(true, std::memory_order_relaxed);
      if (e.kill) e.kill();
    }
  });
}

void AclSetUser(CommandContext& ctx, Args args) {
  if (AclHasSpaces(args[2])) return ReplyError(ctx.out, AclUsernameSpaces());
  const std::string error =
      ctx.server.acl().SetUser(args[2], Strings(args, 3), ctx.server.commands());
  if (!error.empty()) return ReplyError(ctx.out, Status::InvalidArgument("ERR " + error));
  ctx.out.Simple("OK");
}

void AclDelUser(CommandContext& ctx, Args args) {
  for (size_t j = 2; j < args.size(); ++j) {
    if (args[j] == "default") return ReplyError(ctx.out, AclDefaultUserUndeletable());
  }
  const std::vector<std::string> deleted = ctx.server.acl().DelUsers(Strings(args, 2));
  KillClientsOf(ctx.server, deleted);
  ctx.out.Integer(static_cast<int64_t>(deleted.size()));
}

void WriteSelector(protocol::ReplyWriter& out, const AclSelector& s, const CommandTable& table) {
  out.Bulk("commands");
  out.Bulk(DescribeAclCommands(s, table));
  out.Bulk("keys");
  out.Bulk(DescribeAclKeys(s));
  out.Bulk("channels");
  out.Bulk(DescribeAclChannels(s));
}

void AclGetUser(CommandContext& ctx, Args args) {
  AclRegistry::UserPtr user = ctx.server.acl().Find(args[2]);
  if (user == nullptr) return ctx.out.NullBulk();
  const CommandTable& table = ctx.server.commands();
  protocol::ReplyWriter& out = ctx.out;
  out.Map(6);
  out.Bulk("flags");
  std::vector<const char*> flags = {user->enabled ? "on" : "off"};
  if (user->nopass) flags.push_back("nopass");
  if (user->sanitize == AclUser::Sanitize::kSkip) flags.push_back("skip-sanitize-payload");
  if (user->sanitize == AclUser::Sanitize::kSanitize) flags.push_back("sanitize-payload");
  out.Set(flags.size());
  for (const char* f : flags) out.Bulk(f);
  out.Bulk("passwords");
  out.Array(user->passwords.size());
  for (const std::string& p : user->passwords) out.Bulk(p);
  WriteSelector(out, user->selectors.front(), table);
  out.Bulk("selectors");
  out.Array(user->selectors.size() - 1);
  for (size_t i = 1; i < user->selectors.size(); ++i) {
    out.Map(3);
    WriteSelector(out, user->selectors[i], table);
  }
}

void AclListOrUsers(CommandContext& ctx, bool names_only) {
  const std::vector<AclRegistry::UserPtr> users = ctx.server.acl().Users();
  ctx.out.Array(users.size());
  for (const auto& u : users) {
    if (names_only) {
      ctx.out.Bulk(u->name);
    } else {
      ctx.out.Bulk("user " + u->name + " " + DescribeAclUser(*u, ctx.server.commands()));
    }
  }
}
void AclList(CommandContext& ctx, Args) { AclListOrUsers(ctx, false); }
void AclUsers(CommandContext& ctx, Args) { AclListOrUsers(ctx, true); }

void AclWhoAmI(CommandContext& ctx, Args) { ctx.out.Bulk(ctx.client.user_name); }

void AclCat(CommandContext& ctx, Args args) {
  if (args.size() > 3) return ReplyError(ctx.out, SubcommandSyntax("ACL", args[1]));
  if (args.size() == 2) {
    ctx.out.Array(AclCategoryNames().size());
    for (std::string_view name : AclCategoryNames()) ctx.out.Bulk(name);
    return;
  }
  const std::optional<uint32_t> category = AclCategoryByName(args[2]);
  if (!category) return ReplyError(ctx.out, AclUnknownCategory(args[2]));
  std::vector<const std::string*> names;
  for (const CommandSpec& spec : ctx.server.commands().all()) {
    if (spec.acl_categories & *category) names.push_back(&spec.name);
  }
  ctx.out.Array(names.size());
  for (const std::string* n : names) ctx.out.Bulk(*n);
}

void AclGenPass(CommandContext& ctx, Args args) {
  if (args.size() > 3) return ReplyError(ctx.out, SubcommandSyntax("ACL", args[1]));
  int64_t bits = 256;
  if (args.size() == 3) {
    std::optional<int64_t> parsed = ParseInt64(args[2]);
    if (!parsed) return ReplyError(ctx.out, NotAnInteger());
    bits = *parsed;
  }
  if (bits <= 0 || bits > 4096) return ReplyError(ctx.out, AclGenpassBits());
  const size_t chars = static_cast<size_t>((bits + 3) / 4);
  unsigned char random[2048];
  RAND_bytes(random, static_cast<int>((chars + 1) / 2));
  static constexpr char kHex[] = "0123456789abcdef";
  std::string pass;
  for (size_t i = 0; i < chars; ++i) {
    pass += kHex[(i % 2 == 0) ? random[i / 2] >> 4 : random[i / 2] & 15];
  }
  ctx.out.Bulk(pass);
}

const char* ReasonName(AclDenial reason) {
  switch (reason) {
    case AclDenial::kCommand:
      return "command";
    case AclDenial::kKey:
      return "key";
    case AclDenial::kChannel:
      return "channel";
    default:
      return "auth";
  }
}

void AclLog(CommandContext& ctx, Args args) {
  if (args.size() > 3) return ReplyError(ctx.out, SubcommandSyntax("ACL", args[1]));
  int64_t count = 10;
  if (args.size() == 3) {
    if (EqualsIgnoreCase(args[2], "RESET")) {
      ctx.server.acl().ResetLog();
      return ctx.out.Simple("OK");
    }
    std::optional<int64_t> parsed = ParseInt64(args[2]);
    if (!parsed) return ReplyError(ctx.out, NotAnInteger());
    count = std::max<int64_t>(*parsed, 0);
  }
  const int64_t now = ServerState::RealNowMs();
  const std::vector<AclLogEntry> entries = ctx.server.acl().LogEntries(static_cast<size_t>(count));
  ctx.out.Array(entries.size());
  for (const AclLogEntry& e : entries) {
    ctx.out.Map(7);
    ctx.out.Bulk("count");
    ctx.out.Integer(e.count);
    ctx.out.Bulk("reason");
    ctx.out.Bulk(ReasonName(e.reason));
    ctx.out.Bulk("context");
    ctx.out.Bulk(e.context);
    ctx.out.Bulk("object");
    ctx.out.Bulk(e.object);
    ctx.out.Bulk("username");
    ctx.out.Bulk(e.username);
    ctx.out.Bulk("age-seconds");
    ctx.out.ShortestDouble(static_cast<double>(now - e.created_ms) / 1000);
    ctx.out.Bulk("client-info");
    std::string_view info = e.client_info;
    if (!info.empty() && info.back() == '\n') info.remove_suffix(1);
    ctx.out.Bulk(info);
  }
}

void AclDryRun(CommandContext& ctx, Args args) {
  AclRegistry::UserPtr user = ctx.server.acl().Find(args[2]);
  if (user == nullptr) return ReplyError(ctx.out, AclUserNotFound(args[2]));
  const Args cmd = args.subspan(3);
  const CommandSpec* spec = Dispatcher(ctx.server.commands()).Resolve(cmd);
  if (spec == nullptr || spec->handler == nullptr) {
    return ReplyError(ctx.out, AclCommandNotFound(args[3]));
  }
  if (!ArityOk(*spec, cmd.size())) return ReplyError(ctx.out, WrongArity(spec->name));
  const AclVerdict v = CheckAclUser(*user, *spec, cmd);
  if (v.denial == AclDenial::kNone) return ctx.out.Simple("OK");
  ctx.out.Bulk(DryRunDenial(v.denial, spec->name, cmd[static_cast<size_t>(v.pos)]));
}

void AclSave(CommandContext& ctx, Args) {
  const std::string& path = ctx.server.acl_file();
  if (path.empty()) return ReplyError(ctx.out, AclNoAclFile());
  const int err =
      WriteFileDurably(path, AclFileText(ctx.server.acl().Users(), ctx.server.commands()));
  if (err != 0) {
    LogError("ACL SAVE: cannot write " + path + ": " + std::strerror(err));
    return ReplyError(ctx.out, AclSaveFailed());
  }
  ctx.out.Simple("OK");
}

void AclLoad(CommandContext& ctx, Args) {
  const std::string& path = ctx.server.acl_file();
  if (path.empty()) return ReplyError(ctx.out, AclNoAclFile());
  std::string error = LoadAclFile(ctx.server, path);
  if (!error.empty()) return ReplyError(ctx.out, Status::InvalidArgument("ERR " + error));
  ctx.out.Simple("OK");
}

void AclHelp(CommandContext& ctx, Args) {
  static constexpr const char* kLines[] = {
      "ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CAT [<category>]",
      "    List all commands that belong to <category>, or all command categories",
      "    when no category is specified.",
      "DELUSER <username> [<username> ...]",
      "    Delete a list of users.",
      "DRYRUN <username> <command> [<arg> ...]",
      "    Returns whether the user can execute the given command without executing the command.",
      "GETUSER <username>",
      "    Get the user's details.",
      "GENPASS [<bits>]",
      "    Generate a secure 256-bit user password. The optional `bits` argument can",
      "    be used to specify a different size.",
      "LIST",
      "    Show users details in config file format.",
      "LOAD",
      "    Reload users from the ACL file.",
      "LOG [<count> | RESET]",
      "    Show the ACL log entries.",
      "SAVE",
      "    Save the current config to the ACL file.",
      "SETUSER <username> <attribute> [<attribute> ...]",
      "    Create or modify a user with the specified attributes.",
      "USERS",
      "    List all the registered usernames.",
      "WHOAMI",
      "    Return the current connection username.",
      "HELP",
      "    Prints this help.",
  };
  ctx.out.Array(std::size(kLines));
  for (const char* line : kLines) ctx.out.Simple(line);
}

}  // namespace

std::string LoadAclFile(ServerState& server, const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return "Error loading ACLs, opening file '" + path + "': No such file or directory";
  std::stringstream text;
  text << file.rdbuf();
  std::vector<std::vector<std::string>> users;
  std::string error = ParseAclFileText(text.str(), path, &users);
  std::vector<std::string> replaced;
  if (error.empty()) error = server.acl().ReplaceAll(users, server.commands(), path, &replaced);
  if (!error.empty()) return error;
  KillClientsOf(server, replaced);
  return "";
}

void RegisterAclCommands(CommandTable& table) {
  constexpr uint32_t kBase = kNoScript | kLoading | kStale;
  constexpr uint32_t kAdminFlags = kAdmin | kBase;
  auto add = [&](const char* name, int arity, uint32_t flags, Handler h, const char* summary,
                 const char* hint) {
    table.Add(ServerSpec(name, arity, flags, h, summary, "6.0.0", hint));
  };
  add("acl", -2, 0, nullptr, "A container for Access List Control commands.", "subcommand");
  add("acl|setuser", -3, kAdminFlags, AclSetUser, "Creates and modifies an ACL user and its rules.",
      "username [rule [rule ...]]");
  add("acl|getuser", 3, kAdminFlags, AclGetUser, "Lists the ACL rules of a user.", "username");
  add("acl|deluser", -3, kAdminFlags, AclDelUser,
      "Deletes ACL users, and terminates their connections.", "username [username ...]");
  add("acl|list", 2, kAdminFlags, AclList, "Dumps the effective rules in ACL file format.", "");
  add("acl|users", 2, kAdminFlags, AclUsers, "Lists all ACL users.", "");
  add("acl|whoami", 2, kBase, AclWhoAmI,
      "Returns the authenticated username of the current connection.", "");
  add("acl|cat", -2, kBase, AclCat, "Lists the ACL categories, or the commands inside a category.",
      "[category]");
  add("acl|genpass", -2, kBase, AclGenPass,
      "Generates a pseudorandom, secure password that can be used to identify ACL users.",
      "[bits]");
  add("acl|log", -2, kAdminFlags, AclLog,
      "Lists recent security events generated due to ACL rules.", "[count|RESET]");
  add("acl|dryrun", -4, kAdminFlags, AclDryRun,
      "Simulates the execution of a command by a user, without executing the command.",
      "username command [arg [arg ...]]");
  add("acl|save", 2, kAdminFlags, AclSave,
      "Saves the effective ACL rules in the configured ACL file.", "");
  add("acl|load", 2, kAdminFlags, AclLoad, "Reloads the rules from the configured ACL file.", "");
  add("acl|help", 2, kLoading | kStale, AclHelp,
      "Returns helpful text about the different subcommands.", "");
}

}  // namespace sluice::server
