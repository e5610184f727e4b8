// Connection commands: HELLO, AUTH, SELECT, QUIT, RESET and CLIENT subcommands, with Redis
// 7.0's replies (CLIENT SETINFO as Redis 7.2, since clients send it).
//
// Fields of ClientState that CLIENT LIST reads from other threads are written under the client
// registry's lock (see server_state.h).
#include <mutex>
#include <string>

#include "server/commands/cmd_multi.h"
#include "server/commands/cmd_pubsub.h"
#include "server/commands/commands.h"
#include "server/core/acl_check.h"
#include "server/core/args.h"
#include "server/core/client_info.h"
#include "server/core/client_state.h"
#include "server/core/cluster_route.h"
#include "server/core/errors.h"
#include "server/core/server_state.h"
#include "sluice/store.h"

namespace sluice::server {

namespace {

constexpr const char* kRedisVersion = "7.0.15";

// Runs fn with the client registry lock held.
template <typename Fn>
void Locked(CommandContext& ctx, Fn fn) {
  std::lock_guard lock(ctx.server.clients().mutex());
  fn();
}

// Redis accepts names made of printable ASCII without spaces ('!' .. '~').
bool ValidClientName(std::string_view name) {
  for (char c : name) {
    if (c < '!' || c > '~') return false;
  }
  return true;
}

// Redis's ACLAuthenticateUser for AUTH and HELLO AUTH: on success the client is this user;
// a failure is written to the ACL log (reason "auth").
bool Authenticate(CommandContext& ctx, std::string_view user, std::string_view password,
                  std::string_view command) {
  AclRegistry::UserPtr found = ctx.server.acl().Authenticate(user, password);
  if (found == nullptr) {
    LogAuthFailure(ctx, command, user);
    return false;
  }
  Locked(ctx, [&] { ctx.client.user_name.assign(user); });
  ctx.client.acl_generation = 0;  // the gate re-reads the user
  ctx.client.authenticated = true;
  return true;
}

void Auth(CommandContext& ctx, Args args) {
  if (args.size() > 3) return ReplyError(ctx.out, SyntaxError());
  if (args.size() == 2 && ctx.server.acl().default_user()->nopass) {
    return ReplyError(ctx.out, AuthWithoutPassword());
  }
  std::string_view user = args.size() == 3 ? args[1] : "default";
  if (!Authenticate(ctx, user, args.back(), args[0])) return ReplyError(ctx.out, WrongPass());
  ctx.out.Simple("OK");
}

void ReplyHelloMap(CommandContext& ctx) {
  protocol::ReplyWriter& out = ctx.out;
  out.Map(7);
  out.Bulk("server");
  out.Bulk("redis");
  out.Bulk("version");
  out.Bulk(kRedisVersion);
  out.Bulk("proto");
  out.Integer(ctx.client.resp);
  out.Bulk("id");
  out.Integer(static_cast<int64_t>(ctx.client.id));
  out.Bulk("mode");
  out.Bulk("standalone");
  out.Bulk("role");
  out.Bulk("master");
  out.Bulk("modules");
  out.Array(0);
}

// HELLO [protover [AUTH user pass] [SETNAME name]], checked in Redis's order.
void Hello(CommandContext& ctx, Args args) {
  int64_t version = 0;
  if (args.size() >= 2) {
    std::optional<int64_t> v = ParseInt64(args[1]);
    if (!v) return ReplyError(ctx.out, BadProtocolVersion());
    if (*v < 2 || *v > 3) return ReplyError(ctx.out, NoProto());
    version = *v;
  }
  std::optional<std::string_view> user, password, name;
  for (size_t j = 2; j < args.size(); ++j) {
    size_t more = args.size() - 1 - j;
    if (EqualsIgnoreCase(args[j], "AUTH") && more >= 2) {
      user = args[j + 1];
      password = args[j + 2];
      j += 2;
    } else if (EqualsIgnoreCase(args[j], "SETNAME") && more >= 1) {
      name = args[j + 1];
      j += 1;
    } else {
      return ReplyError(ctx.out, HelloSyntax(args[j]));
    }
  }
  if (user) {
    if (!Authenticate(ctx, *user, *password, args[0])) return ReplyError(ctx.out, WrongPass());
  }
  if (!ctx.client.authenticated && ctx.server.requirepass_set()) {
    return ReplyError(ctx.out, HelloNoAuth());
  }
  if (name && !ValidClientName(*name)) return ReplyError(ctx.out, BadClientName());
  Locked(ctx, [&] {
    if (name) ctx.client.name.assign(*name);
    if (version != 0) ctx.client.resp = static_cast<int>(version);
  });
  ctx.out.set_resp(ctx.client.resp);
  ReplyHelloMap(ctx);
}

void Select(CommandContext& ctx, Args args) {
  std::optional<int64_t> db = ParseInt64(args[1]);
  if (!db || *db < INT32_MIN || *db > INT32_MAX) return ReplyError(ctx.out, NotAnInteger());
  if (ctx.server.cluster() != nullptr && *db != 0) {
    return ReplyError(ctx.out, SelectNotAllowedInCluster());
  }
  if (*db < 0 || *db >= kNumDatabases) return ReplyError(ctx.out, DbIndexOutOfRange());
  Locked(ctx, [&] { ctx.client.db = static_cast<int>(*db); });
  ctx.out.Simple("OK");
}

// MONITOR: from now on the client is sent every command the server runs (server/core/monitors.h).
// A client already monitoring gets no reply, as from Redis.
void Monitor(CommandContext& ctx, Args) {
  // Inside EXEC (ctx.unit set; scripts may not call it) Redis's client denies blocking.
  if (ctx.unit != nullptr) return ReplyError(ctx.out, MonitorDenyBlocking());
  if (ctx.server.monitors().Add(&ctx.client)) ctx.out.Simple("OK");
}

void Quit(CommandContext& ctx, Args) {
  ctx.client.close_after_reply = true;
  ctx.out.Simple("OK");
}

// RESET: back to a fresh connection's state (RESP2, db 0, no name, not authenticated when a
// password is set).
void Reset(CommandContext& ctx, Args) {
  EndTransaction(ctx.server, ctx.client);
  ForgetSubscriptions(ctx);
  ctx.server.monitors().Remove(&ctx.client);
  ctx.server.tracking().Disable(ctx.client);
  Locked(ctx, [&] {
    ctx.client.db = 0;
    ctx.client.resp = 2;
    ctx.client.name.clear();
    ctx.client.user_name = "default";
  });
  ctx.client.acl_generation = 0;
  ctx.client.cluster_asking = false;  // Redis's clearClientConnectionState
  ctx.client.cluster_readonly = false;
  ctx.client.authenticated = !ctx.server.requirepass_set();
  ctx.out.set_resp(2);
  ctx.out.Simple("RESET");
}

// ---- CLIENT

void ClientId(CommandContext& ctx, Args) { ctx.out.Integer(static_cast<int64_t>(ctx.client.id)); }

void ClientInfo(CommandContext& ctx, Args) {
  std::string line;
  Locked(ctx, [&] { line = ClientInfoLine(ctx.client, ServerState::RealNowMs()); });
  ctx.out.Verbatim("txt", line);
}

// A CLIENT LIST / CLIENT KILL TYPE: Redis's client classes. Replication links (a replica's
// connection here, our link to our primary) are never `normal` or `pubsub`.
enum class ClientType { kAny, kNormal, kPubSub, kMaster, kReplica };

std::optional<ClientType> ParseClientType(std::string_view type) {
  if (EqualsIgnoreCase(type, "normal")) return ClientType::kNormal;
  if (EqualsIgnoreCase(type, "pubsub")) return ClientType::kPubSub;
  if (EqualsIgnoreCase(type, "master")) return ClientType::kMaster;
  if (EqualsIgnoreCase(type, "replica") || EqualsIgnoreCase(type, "slave")) {
    return ClientType::kReplica;
  }
  return std::nullopt;
}

bool OfType(const ClientState& c, ClientType type) {
  const int repl = c.repl_kind.load(std::memory_order_relaxed);
  switch (type) {
    case ClientType::kAny:
      return true;
    case ClientType::kNormal:
      return repl == ClientState::kNotRepl && !c.subscribed();
    case ClientType::kPubSub:
      return repl == ClientState::kNotRepl && c.subscribed();
    case ClientType::kMaster:
      return repl == ClientState::kMasterLink;
    case ClientType::kReplica:
      return repl == ClientState::kReplicaLink;
  }
  return false;
}

// CLIENT LIST [TYPE normal|master|replica|pubsub] [ID id [id ...]]
void ClientList(CommandContext& ctx, Args args) {
  ClientType type = ClientType::kAny;
  std::vector<uint64_t> ids;
  size_t i = 2;
  if (i < args.size() && EqualsIgnoreCase(args[i], "TYPE") && args.size() == 4) {
    std::optional<ClientType> parsed = ParseClientType(args[3]);
    if (!parsed) return ReplyError(ctx.out, UnknownClientType(args[3]));
    type = *parsed;
  } else if (i < args.size() && EqualsIgnoreCase(args[i], "ID") && args.size() >= 4) {
    for (size_t j = 3; j < args.size(); ++j) {
      std::optional<int64_t> id = ParseInt64(args[j]);
      if (!id || *id <= 0) return ReplyError(ctx.out, InvalidClientId());
      ids.push_back(static_cast<uint64_t>(*id));
    }
  } else if (args.size() != 2) {
    return ReplyError(ctx.out, SyntaxError());
  }
  std::string text;
  int64_t now = ServerState::RealNowMs();
  ctx.server.clients().ForEachLocked([&](ClientRegistry::Entry& e) {
    if (!OfType(*e.client, type)) return;
    if (!ids.empty() && std::find(ids.begin(), ids.end(), e.client->id) == ids.end()) return;
    text += ClientInfoLine(*e.client, now);
  });
  ctx.out.Verbatim("txt", text);
}

// CLIENT KILL ip:port | CLIENT KILL <filter> <value> [<filter> <value> ...]
struct KillFilter {
  std::optional<uint64_t> id;
  std::optional<std::string_view> addr, laddr, user;
  ClientType type = ClientType::kAny;
  bool skip_me = true;
};

Status ParseKillFilters(const AclRegistry& acl, Args args, KillFilter* f) {
  if ((args.size() - 2) % 2 != 0) return SyntaxError();
  for (size_t i = 2; i + 1 < args.size(); i += 2) {
    std::string_view name = args[i], value = args[i + 1];
    if (EqualsIgnoreCase(name, "ID")) {
      std::optional<int64_t> id = ParseInt64(value);
      if (!id || *id <= 0) return ClientIdNotPositive();
      f->id = static_cast<uint64_t>(*id);
    } else if (EqualsIgnoreCase(name, "ADDR")) {
      f->addr = value;
    } else if (EqualsIgnoreCase(name, "LADDR")) {
      f->laddr = value;
    } else if (EqualsIgnoreCase(name, "TYPE")) {
      std::optional<ClientType> type = ParseClientType(value);
      if (!type) return UnknownClientType(value);
      f->type = *type;
    } else if (EqualsIgnoreCase(name, "USER")) {
      if (acl.Find(value) == nullptr) return NoSuchUser(value);
      f->user = value;
    } else if (EqualsIgnoreCase(name, "SKIPME")) {
      if (EqualsIgnoreCase(value, "yes")) {
        f->skip_me = true;
      } else if (EqualsIgnoreCase(value, "no")) {
        f->skip_me = false;
      } else {
        return SyntaxError();
      }
    } else {
      return SyntaxError();
    }
  }
  return Status::Ok();
}

// Kills matching clients; returns how many. The caller's own connection is closed only after
// this reply is written.
int64_t KillMatching(CommandContext& ctx, const KillFilter& f) {
  int64_t killed = 0;
  ctx.server.clients().ForEachLocked([&](ClientRegistry::Entry& e) {
    ClientState& c = *e.client;
    if (!OfType(c, f.type)) return;
    if (f.id && c.id != *f.id) return;
    if (f.addr && c.addr != *f.addr) return;
    if (f.laddr && c.laddr != *f.laddr) return;
    if (f.user && c.user_name != *f.user) return;
    if (&c == &ctx.client) {
      if (f.skip_me) return;
      c.close_after_reply = true;
    } else {
      c.kill_requested.store(true, std::memory_order_release);
      if (e.kill) e.kill();
    }
    ++killed;
  });
  return killed;
}

void ClientKill(CommandContext& ctx, Args args) {
  if (args.size() == 3) {  // old form: CLIENT KILL ip:port (never skips the caller)
    KillFilter f;
    f.addr = args[2];
    f.skip_me = false;
    if (KillMatching(ctx, f) == 0) return ReplyError(ctx.out, NoSuchClient());
    return ctx.out.Simple("OK");
  }
  KillFilter f;
  Status s = ParseKillFilters(ctx.server.acl(), args, &f);
  if (!s.ok()) return ReplyError(ctx.out, s);
  ctx.out.Integer(KillMatching(ctx, f));
}

void ClientSetName(CommandContext& ctx, Args args) {
  if (!ValidClientName(args[2])) return ReplyError(ctx.out, BadClientName());
  Locked(ctx, [&] { ctx.client.name.assign(args[2]); });
  ctx.out.Simple("OK");
}

void ClientGetName(CommandContext& ctx, Args) {
  std::string name;
  Locked(ctx, [&] { name = ctx.client.name; });
  if (name.empty()) return ctx.out.NullBulk();
  ctx.out.Bulk(name);
}

// CLIENT SETINFO LIB-NAME|LIB-VER value (Redis 7.2).
void ClientSetInfo(CommandContext& ctx, Args args) {
  std::string_view attr = args[2], value = args[3];
  bool is_name = EqualsIgnoreCase(attr, "lib-name");
  if (!is_name && !EqualsIgnoreCase(attr, "lib-ver")) {
    return ReplyError(ctx.out, UnrecognizedOption(attr));
  }
  if (!ValidClientName(value)) {
    return ReplyError(ctx.out, BadClientInfo(is_name ? "lib-name" : "lib-ver"));
  }
  Locked(ctx, [&] { (is_name ? ctx.client.lib_name : ctx.client.lib_ver).assign(value); });
  ctx.out.Simple("OK");
}

void ClientNoEvict(CommandContext& ctx, Args args) {
  if (!EqualsIgnoreCase(args[2], "on") && !EqualsIgnoreCase(args[2], "off")) {
    return ReplyError(ctx.out, SyntaxError());
  }
  ctx.out.Simple("OK");  // Sluice never evicts clients
}

// CLIENT REPLY ON|OFF|SKIP, as Redis: ON answers OK; OFF and SKIP answer nothing (the connection
// drops the replies: Connection::RunCommand); SKIP while OFF changes nothing.
void ClientReply(CommandContext& ctx, Args args) {
  if (EqualsIgnoreCase(args[2], "on")) {
    // As Redis: ON clears SKIP too, the one it would have silenced (itself) included.
    ctx.client.reply_off = false;
    ctx.client.reply_skip_next = false;
    ctx.client.reply_skip = false;
    return ctx.out.Simple("OK");
  }
  if (EqualsIgnoreCase(args[2], "off")) {
    ctx.client.reply_off = true;
    return;
  }
  if (EqualsIgnoreCase(args[2], "skip")) {
    if (!ctx.client.reply_off) ctx.client.reply_skip_next = true;
    return;
  }
  ReplyError(ctx.out, SyntaxError());
}

// CLIENT UNBLOCK client-id [TIMEOUT|ERROR]: 1 when that client was blocked (it then answers as
// on a timeout, or -UNBLOCKED), else 0.
void ClientUnblock(CommandContext& ctx, Args args) {
  if (args.size() > 4) return ReplyError(ctx.out, SubcommandSyntax("client", args[1]));
  std::optional<int64_t> id = ParseInt64(args[2]);
  if (!id) return ReplyError(ctx.out, NotAnInteger());
  BlockEvent how = BlockEvent::kTimeout;
  if (args.size() == 4) {
    if (EqualsIgnoreCase(args[3], "error")) {
      how = BlockEvent::kError;
    } else if (!EqualsIgnoreCase(args[3], "timeout")) {
      return ReplyError(ctx.out, UnblockReason());
    }
  }
  const bool unblocked = *id > 0 && ctx.server.blocking().Unblock(static_cast<uint64_t>(*id), how);
  ctx.out.Integer(unblocked ? 1 : 0);
}

void ClientHelp(CommandContext& ctx, Args) {
  static constexpr const char* kLines[] = {
      "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CACHING (YES|NO)",
      "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
      "GETREDIR",
      "    Return the client ID we are redirecting to when tracking is enabled.",
      "GETNAME",
      "    Return the name of the current connection.",
      "ID",
      "    Return the ID of the current connection.",
      "INFO",
      "    Return information about the current client connection.",
      "KILL <ip:port>",
      "    Kill connection made from <ip:port>.",
      "KILL <option> <value> [<option> <value> [...]]",
      "    Kill connections. Options are: ID, ADDR, LADDR, TYPE, USER, SKIPME (YES|NO).",
      "LIST [TYPE NORMAL|ID <id> ...]",
      "    Return information about client connections.",
      "SETNAME <name>",
      "    Assign the name <name> to the current connection.",
      "SETINFO <LIB-NAME|LIB-VER> <value>",
      "    Record the client library's name or version.",
      "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
      "         [OPTIN] [OPTOUT] [NOLOOP]",
      "    Control server assisted client side caching.",
      "TRACKINGINFO",
      "    Report tracking status for the current connection.",
      "NO-EVICT (ON|OFF)",
      "    Accepted; Sluice never evicts clients.",
      "PAUSE <timeout> [WRITE|ALL]",
      "    Suspend all, or just write, clients for <timeout> milliseconds.",
      "UNPAUSE",
      "    Stop the current client pause, resuming traffic.",
      "REPLY (ON|OFF|SKIP)",
      "    Control the replies sent to the current connection.",
      "UNBLOCK <clientid> [TIMEOUT|ERROR]",
      "    Unblock the specified blocked client.",
      "HELP",
      "    Prints this help.",
  };
  ctx.out.Array(std::size(kLines));
  for (const char* line : kLines) ctx.out.Simple(line);
}

CommandSpec Spec(const char* name, int arity, uint32_t flags, Handler handler, const char* summary,
                 const char* since, const char* hint) {
  return MakeSpec("connection", name, arity, flags, {}, handler, summary, since, hint);
}

}  // namespace

void RegisterConnectionCommands(CommandTable& table) {
  constexpr uint32_t kConnFlags = kNoScript | kLoading | kStale | kFast;
  table.Add(Spec("hello", -1, kConnFlags | kNoAuth | kAllowBusy, Hello,
                 "Handshake with the server, optionally switching protocol and authenticating.",
                 "6.0.0", "[protover [AUTH username password] [SETNAME clientname]]"));
  table.Add(Spec("auth", -2, kConnFlags | kNoAuth | kAllowBusy, Auth, "Authenticate to the server.",
                 "1.0.0", "[username] password"));
  table.Add(Spec("select", 2, kLoading | kStale | kFast, Select,
                 "Change the selected database for the current connection.", "1.0.0", "index"));
  table.Add(Spec("quit", -1, kConnFlags | kNoAuth | kMultiControl | kAllowBusy, Quit,
                 "Close the connection.", "1.0.0", ""));
  table.Add(MakeSpec("server", "monitor", 1, kAdmin | kNoScript | kLoading | kStale, {}, Monitor,
                     "Listen for all requests received by the server in real time.", "1.0.0", ""));
  table.Add(Spec("reset", 1, kConnFlags | kNoAuth | kMultiControl | kAllowBusy, Reset,
                 "Reset the connection.", "6.2.0", ""));
  table.Add(Spec("client", -2, 0, nullptr, "A container for client connection commands.", "2.4.0",
                 "subcommand"));
  constexpr uint32_t kClientFlags = kNoScript | kLoading | kStale;
  table.Add(Spec("client|id", 2, kClientFlags, ClientId, "Returns the client ID.", "5.0.0", ""));
  table.Add(Spec("client|info", 2, kClientFlags, ClientInfo,
                 "Returns information about the connection.", "6.2.0", ""));
  table.Add(Spec("client|list", -2, kClientFlags | kAdmin, ClientList, "Lists open connections.",
                 "2.4.0", "[TYPE NORMAL|MASTER|REPLICA|PUBSUB] [ID client-id [client-id ...]]"));
  table.Add(Spec("client|kill", -3, kClientFlags | kAdmin, ClientKill,
                 "Terminates open connections.", "2.4.0",
                 "ip:port|[ID client-id] [ADDR ip:port] [LADDR ip:port] [TYPE type] [USER "
                 "username] [SKIPME YES|NO]"));
  table.Add(Spec("client|setname", 3, kClientFlags, ClientSetName, "Sets the connection name.",
                 "2.6.9", "connection-name"));
  table.Add(Spec("client|getname", 2, kClientFlags, ClientGetName,
                 "Returns the name of the connection.", "2.6.9", ""));
  table.Add(Spec("client|setinfo", 4, kClientFlags, ClientSetInfo,
                 "Sets information specific to the client or connection.", "7.2.0",
                 "LIB-NAME libname|LIB-VER libver"));
  table.Add(Spec("client|no-evict", 3, kClientFlags | kAdmin, ClientNoEvict,
                 "Sets the client eviction mode of the connection.", "7.0.0", "ON|OFF"));
  table.Add(Spec("client|reply", 3, kClientFlags, ClientReply,
                 "Instructs the server whether to reply to commands.", "3.2.0", "ON|OFF|SKIP"));
  table.Add(Spec("client|unblock", -3, kClientFlags | kAdmin, ClientUnblock,
                 "Unblocks a client blocked by a blocking command from a different connection.",
                 "5.0.0", "client-id [TIMEOUT|ERROR]"));
  table.Add(Spec("client|help", 2, kClientFlags & ~kNoScript, ClientHelp,
                 "Returns helpful text about the "
                 "different subcommands.",
                 "5.0.0", ""));
}

}  // namespace sluice::server
