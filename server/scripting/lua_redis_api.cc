#include "server/scripting/lua_redis_api.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <lua5.1/lua.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "server/core/acl_check.h"
#include "server/core/cluster_route.h"
#include "server/core/dispatcher.h"
#include "server/core/errors.h"
#include "server/core/logging.h"
#include "server/core/replication_hook.h"
#include "server/core/server_state.h"
#include "server/scripting/lua_convert.h"
#include "server/scripting/lua_sha1.h"
#include "server/scripting/lua_vm.h"

namespace sluice::server {

namespace {

constexpr int kLogDebug = 0, kLogVerbose = 1, kLogNotice = 2, kLogWarning = 3;
constexpr int kReplNone = 0, kReplAof = 1, kReplReplica = 2, kReplAll = 3;

// redis.call raises the error table, redis.pcall returns it.
int Fail(lua_State* L, const Status& status, bool raise) {
  PushErrorTable(L, ErrorText(status));
  if (raise) lua_error(L);
  return 1;
}

// The redis library's own argument errors, raised as redis.call raises a command's: a pcall in
// the script catches "ERR ..." as from Redis 7.0.
int Raise(lua_State* L, const Status& status) { return Fail(L, status, true); }

// The Lua arguments as command arguments: strings as they are, numbers as "%.17g".
// A number argument as Redis 7.0 passes it ("%.17g"). An integer below 2^53 prints as its digits
// under "%.17g" (no exponent below 1e17), so those take to_chars: snprintf's float formatting was
// 1.6% of the server's samples under BullMQ, whose scripts pass timestamps and counters as numbers.
void NumberArg(double v, std::string* out) {
  char buf[64];
  constexpr double kExact = 9007199254740992.0;  // 2^53
  if (v > -kExact && v < kExact && v == static_cast<double>(static_cast<int64_t>(v)) &&
      !(v == 0 && std::signbit(v))) {
    const auto r = std::to_chars(buf, buf + sizeof buf, static_cast<int64_t>(v));
    out->assign(buf, r.ptr);
    return;
  }
  const int n = std::snprintf(buf, sizeof buf, "%.17g", v);
  out->assign(buf, static_cast<size_t>(n));
}

bool CollectArgs(lua_State* L, std::vector<std::string>* args) {
  const int argc = lua_gettop(L);
  args->resize(static_cast<size_t>(argc));
  for (int i = 1; i <= argc; ++i) {
    std::string& a = (*args)[static_cast<size_t>(i - 1)];
    if (lua_type(L, i) == LUA_TNUMBER) {
      NumberArg(lua_tonumber(L, i), &a);
    } else if (lua_type(L, i) == LUA_TSTRING) {
      size_t len = 0;
      const char* s = lua_tolstring(L, i, &len);
      a.assign(s, len);
    } else {
      return false;
    }
  }
  return true;
}

int GenericCall(lua_State* L, bool raise) {
  ScriptExecution* exec = LuaVm::current();
  if (exec == nullptr) return luaL_error(L, "redis.call is only available inside a script");
  if (lua_gettop(L) == 0) return Fail(L, ScriptNoArguments(), raise);
  // Reused by the thread's calls (redis.call never nests: a script cannot call EVAL or FCALL),
  // so the arguments' strings and the reply keep their capacity from one call to the next
  // instead of costing a malloc each (a BullMQ key is past std::string's inline 15 bytes).
  thread_local std::vector<std::string> args;
  thread_local std::vector<std::string_view> views;
  thread_local std::string reply;
  // ...but a big argument or reply is not kept past its call (Lua errors unwind as exceptions).
  struct Trim {
    ~Trim() {
      constexpr size_t kKeep = 64 << 10;
      if (reply.capacity() > kKeep) std::string().swap(reply);
      for (std::string& a : args) {
        if (a.capacity() > kKeep) std::string().swap(a);
      }
    }
  } trim;
  if (!CollectArgs(L, &args)) return Fail(L, ScriptBadArgument(), raise);
  views.assign(args.begin(), args.end());
  CommandContext& ctx = *exec->ctx;
  const Dispatcher dispatcher(ctx.server.commands());
  const CommandSpec* spec = dispatcher.Resolve(views);
  if (spec == nullptr) return Fail(L, ScriptUnknownCommand(), raise);
  if (spec->handler == nullptr || !ArityOk(*spec, views.size())) {
    return Fail(L, ScriptWrongArity(), raise);
  }
  if (spec->flags & kNoScript) return Fail(L, ScriptNoScriptCommand(), raise);
  // As Redis: a read-only script may not PUBLISH or PFCOUNT either (may-replicate), which is
  // what lets CLIENT PAUSE WRITE run read-only scripts.
  if (exec->read_only && (spec->flags & (kWrite | kMayReplicate))) {
    return Fail(L, ScriptWriteInReadOnly(), raise);
  }
  if (spec->flags & kWrite) {
    if (Status s = AdmitScriptWrite(*exec->ctx); !s.ok()) return Fail(L, s, raise);
    exec->running.wrote.store(true, std::memory_order_release);
  }
  reply.clear();
  protocol::ReplyWriter out(&reply, exec->resp);
  {
    CommandContext sub{ctx.store, ctx.server, ctx.client, out};
    // Redis's scriptVerifyACL: the script's caller's user, for every command it calls.
    const AclDenial denial = CheckClientAcl(sub, *spec, views, "lua");
    if (denial != AclDenial::kNone) return Fail(L, ScriptNoPerm(denial), raise);
    // Redis's scriptVerifyClusterState: the keys must be served here, in the script's slot.
    if (const ClusterRouter* router = ctx.server.cluster(); router != nullptr) {
      Status s = RouteScriptCommand(*router, sub, *spec, views, exec->allow_cross_slot);
      if (!s.ok()) return Fail(L, s, raise);
    }
    sub.unit = &ctx.txn();
    sub.from_script = true;
    dispatcher.RunQueued(sub, *spec, views);
    if (sub.unit->conflicted()) {
      // The script stops here; the dispatcher rolls the unit back and runs it again holding
      // every stripe. Nothing of this run is replied.
      exec->aborted = true;
      reply.clear();
      PushErrorTable(L, ErrorText(ScriptLockConflict()));
      return lua_error(L);
    }
  }
  PushReply(L, reply);
  if (raise && !reply.empty() && reply[0] == '-') return lua_error(L);
  return 1;
}

int Call(lua_State* L) { return GenericCall(L, true); }
int PCall(lua_State* L) { return GenericCall(L, false); }

// redis.error_reply("CODE message") / ("message": code ERR), as Redis 7.0 builds the table.
int ErrorReply(lua_State* L) {
  if (lua_gettop(L) != 1 || lua_type(L, 1) != LUA_TSTRING) {
    return Fail(L, ScriptWrongArgsOrType(), false);
  }
  std::string text = lua_tostring(L, 1);
  if (!text.empty() && text[0] == '-') text.erase(0, 1);
  if (text.find(' ') == std::string::npos) text = "ERR " + text;
  while (!text.empty() && (text.back() == '\r' || text.back() == '\n')) text.pop_back();
  PushErrorTable(L, text);
  return 1;
}

int StatusReply(lua_State* L) {
  if (lua_gettop(L) != 1 || lua_type(L, 1) != LUA_TSTRING) {
    return Fail(L, ScriptWrongArgsOrType(), false);
  }
  lua_newtable(L);
  lua_pushvalue(L, 1);
  lua_setfield(L, -2, "ok");
  return 1;
}

int Sha1(lua_State* L) {
  if (lua_gettop(L) != 1) return Raise(L, ScriptWrongArgs());
  size_t len = 0;
  const char* s = lua_tolstring(L, 1, &len);
  const std::string hex = Sha1Hex(s == nullptr ? std::string_view{} : std::string_view(s, len));
  lua_pushlstring(L, hex.data(), hex.size());
  return 1;
}

int Log(lua_State* L) {
  const int argc = lua_gettop(L);
  if (argc < 2) return Raise(L, ScriptLogNeedsArgs());
  if (!lua_isnumber(L, 1)) return Raise(L, ScriptBadLogLevel());
  const int level = static_cast<int>(lua_tonumber(L, 1));
  if (level < kLogDebug || level > kLogWarning) return Raise(L, ScriptBadLogLevel());
  std::string line;
  for (int i = 2; i <= argc; ++i) {
    size_t len = 0;
    const char* s = lua_tolstring(L, i, &len);
    if (s == nullptr) continue;
    if (!line.empty()) line += ' ';
    line.append(s, len);
  }
  if (level == kLogWarning) {
    LogError(line);
  } else if (level == kLogNotice) {
    LogInfo(line);
  }
  return 0;
}

int SetResp(lua_State* L) {
  ScriptExecution* exec = LuaVm::current();
  if (lua_gettop(L) != 1) return Raise(L, ScriptResetNeedsArg());
  const int resp = static_cast<int>(lua_tonumber(L, 1));
  if (resp != 2 && resp != 3) return Raise(L, ScriptBadResp());
  if (exec != nullptr) exec->resp = resp;
  return 0;
}

int SetRepl(lua_State* L) {
  if (lua_gettop(L) != 1) {
    return Raise(L, ScriptSetReplArgs());
  }
  const int flags = static_cast<int>(lua_tonumber(L, 1));
  if (flags < kReplNone || flags > kReplAll) {
    return Raise(L, ScriptBadReplFlags());
  }
  // Accepted: a script reaches replicas as the state of the keys it wrote (docs/replication.md),
  // which no flag narrows.
  return 0;
}

// redis.acl_check_cmd(command, args...): whether the script's caller's user may run the
// command with these arguments (keys included); nothing is run and nothing is logged.
int AclCheckCmd(lua_State* L) {
  ScriptExecution* exec = LuaVm::current();
  if (exec == nullptr) return Raise(L, ScriptAclCheckOutsideRun());
  if (lua_gettop(L) == 0) return Raise(L, ScriptNoArguments());
  std::vector<std::string> args;
  if (!CollectArgs(L, &args)) return Raise(L, ScriptBadArgument());
  const std::vector<std::string_view> views(args.begin(), args.end());
  CommandContext& ctx = *exec->ctx;
  const CommandSpec* spec = Dispatcher(ctx.server.commands()).Resolve(views);
  if (spec == nullptr) return Raise(L, ScriptAclCheckUnknownCommand());
  RefreshClientUser(ctx);
  bool allowed = ctx.client.acl_unrestricted;
  if (!allowed && ctx.client.user != nullptr) {
    allowed = CheckAclUser(*ctx.client.user, *spec, views).denial == AclDenial::kNone;
  }
  lua_pushboolean(L, allowed ? 1 : 0);
  return 1;
}

int ReplicateCommands(lua_State* L) {
  lua_pushboolean(L, 1);
  return 1;
}

int Breakpoint(lua_State* L) {
  lua_pushboolean(L, 0);  // no debugger attached
  return 1;
}

int Debug(lua_State*) { return 0; }

void SetNumber(lua_State* L, const char* name, double value) {
  lua_pushnumber(L, value);
  lua_setfield(L, -2, name);
}

}  // namespace

void OpenRedisApi(lua_State* L) {
  static const luaL_Reg kFunctions[] = {{"call", Call},
                                        {"pcall", PCall},
                                        {"error_reply", ErrorReply},
                                        {"status_reply", StatusReply},
                                        {"sha1hex", Sha1},
                                        {"log", Log},
                                        {"setresp", SetResp},
                                        {"set_repl", SetRepl},
                                        {"replicate_commands", ReplicateCommands},
                                        {"acl_check_cmd", AclCheckCmd},
                                        {"breakpoint", Breakpoint},
                                        {"debug", Debug},
                                        {nullptr, nullptr}};
  lua_newtable(L);
  luaL_register(L, nullptr, kFunctions);
  SetNumber(L, "LOG_DEBUG", kLogDebug);
  SetNumber(L, "LOG_VERBOSE", kLogVerbose);
  SetNumber(L, "LOG_NOTICE", kLogNotice);
  SetNumber(L, "LOG_WARNING", kLogWarning);
  SetNumber(L, "REPL_NONE", kReplNone);
  SetNumber(L, "REPL_AOF", kReplAof);
  SetNumber(L, "REPL_SLAVE", kReplReplica);
  SetNumber(L, "REPL_REPLICA", kReplReplica);
  SetNumber(L, "REPL_ALL", kReplAll);
  lua_pushstring(L, "7.0.15");
  lua_setfield(L, -2, "REDIS_VERSION");
  SetNumber(L, "REDIS_VERSION_NUM", 0x07000f);
  lua_setglobal(L, "redis");
}

}  // namespace sluice::server
