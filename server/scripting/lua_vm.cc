#include "server/scripting/lua_vm.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <lua5.1/lua.hpp>
#include <memory>
#include <string>

#include "server/core/errors.h"
#include "server/core/server_state.h"
#include "server/scripting/lua_convert.h"
#include "server/scripting/lua_libs.h"
#include "server/scripting/lua_redis_api.h"

extern "C" {
int luaopen_cjson(lua_State* L);  // Debian's lua-cjson-dev
}

namespace sluice::server {

namespace {

// Registry keys.
constexpr const char* kFunctionsKey = "sluice.functions";  // sha -> compiled function
constexpr const char* kGlobalsKey = "sluice.globals";      // the real globals table

// Instructions between two checks of the kill flag.
constexpr int kHookInterval = 10000;

std::atomic<int64_t> g_total_memory[2] = {};  // by LuaVm::Kind
thread_local ScriptExecution* g_current = nullptr;
thread_local std::unique_ptr<LuaVm> g_vms[2];

// __index of the globals' metatable: only reached for names that do not exist.
int MissingGlobal(lua_State* L) {
  const char* name = lua_tostring(L, 2);
  return luaL_error(L, "%s", NonexistentGlobal(name == nullptr ? "?" : name).c_str());
}

// Redis's pcall: an error table caught by the script becomes its message string. An aborted
// script (a lock conflict, SCRIPT KILL) cannot be caught.
int ScriptPcall(lua_State* L) {
  const int argc = lua_gettop(L);
  luaL_checkany(L, 1);
  const int rc = lua_pcall(L, argc - 1, LUA_MULTRET, 0);
  ScriptExecution* exec = LuaVm::current();
  if (rc != 0 && exec != nullptr && (exec->aborted || exec->running.kill.load())) lua_error(L);
  if (rc == 0) {
    lua_pushboolean(L, 1);
    lua_insert(L, 1);
    return lua_gettop(L);
  }
  if (lua_istable(L, -1)) {
    lua_getfield(L, -1, "err");
    if (lua_isstring(L, -1)) {
      lua_replace(L, -2);
    } else {
      lua_pop(L, 1);
    }
  }
  lua_pushboolean(L, 0);
  lua_insert(L, -2);
  return 2;
}

}  // namespace

// The error handler of every script call: makes the error a table {err=...} ("ERR " before a
// string's text) and records where it was raised (source, line) as Redis 7.0 does.
int LuaVm::ErrorHandler(lua_State* L) {
  // The innermost Lua function on the stack (C functions, Sluice's wrappers included, skipped).
  lua_Debug ar;
  bool have = false;
  for (int level = 1; !have && lua_getstack(L, level, &ar); ++level) {
    have = lua_getinfo(L, "Sl", &ar) && std::strcmp(ar.what, "C") != 0;
  }
  if (!lua_istable(L, 1)) {
    std::string text = "ERR ";
    if (lua_isstring(L, 1)) {
      text += lua_tostring(L, 1);
    } else {
      text += lua_typename(L, lua_type(L, 1));
    }
    lua_newtable(L);
    lua_pushlstring(L, text.data(), text.size());
    lua_setfield(L, -2, "err");
    lua_replace(L, 1);
  }
  if (have) {
    lua_pushstring(L, ar.source);
    lua_setfield(L, 1, "source");
    lua_pushinteger(L, ar.currentline);
    lua_setfield(L, 1, "line");
  }
  lua_settop(L, 1);
  return 1;
}

namespace {

// Calls a library's open function and stores what it returns as the global `name`. The base
// library (name "") registers its globals itself and returns _G: storing that as _G[""] would
// add a global Redis lacks and give _G two paths to itself, which made cmsgpack.pack(_G) (16
// levels deep) 2^16 times the work it is on Redis.
void OpenLibrary(lua_State* L, lua_CFunction open, const char* name) {
  lua_pushcfunction(L, open);
  lua_pushstring(L, name);
  lua_call(L, 1, 1);
  if (lua_istable(L, -1) && name[0] != '\0') {
    lua_setglobal(L, name);
  } else {
    lua_pop(L, 1);
  }
}

// Marks the global `name` (a table) read-only in Lua itself (the patched VM): every write to it
// (assignment, rawset, setmetatable) fails with "Attempt to modify a readonly table", so no
// script changes what a later script on this thread sees. As Redis 7.0, it keeps no metatable.
void ProtectGlobal(lua_State* L, int globals, const char* name) {
  lua_getfield(L, globals, name);
  if (lua_istable(L, -1)) lua_enablereadonlytable(L, -1, 1);
  lua_pop(L, 1);
}

// The metatable of strings (the only basic type with one) read-only: `getmetatable('')` must
// not let a script change how strings behave in later scripts (CVE-2025-46818).
void ProtectStringMetatable(lua_State* L) {
  lua_pushliteral(L, "");
  if (lua_getmetatable(L, -1)) {
    lua_enablereadonlytable(L, -1, 1);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

void PushStrings(lua_State* L, Args items) {
  lua_createtable(L, static_cast<int>(items.size()), 0);
  for (size_t i = 0; i < items.size(); ++i) {
    lua_pushlstring(L, items[i].data(), items[i].size());
    lua_rawseti(L, -2, static_cast<int>(i + 1));
  }
}

// Makes `exec` this thread's running script for its scope. A script enters the server's
// registry of busy scripts only once it has run past busy-reply-threshold (LuaVm::Hook notices),
// so a short script touches no shared state at all.
class CurrentScope {
 public:
  explicit CurrentScope(ScriptExecution& exec) : exec_(exec), previous_(g_current) {
    g_current = &exec;
    exec.running.started_ms = RunningScripts::SteadyNowMs();
    exec.running.thread = std::this_thread::get_id();
  }
  ~CurrentScope() {
    if (exec_.running.registered) exec_.ctx->server.running_scripts().Remove(&exec_.running);
    g_current = previous_;
  }

 private:
  ScriptExecution& exec_;
  ScriptExecution* previous_;
};

}  // namespace

LuaVm& LuaVm::ForThread(Kind kind, uint64_t generation) {
  std::unique_ptr<LuaVm>& vm = g_vms[static_cast<int>(kind)];
  if (!vm || vm->generation_ != generation) {
    vm.reset();
    vm.reset(new LuaVm(kind, generation));
  }
  return *vm;
}

std::unique_ptr<LuaVm> LuaVm::Create(Kind kind) {
  return std::unique_ptr<LuaVm>(new LuaVm(kind, 0));
}

void LuaVm::PushArgs(Args items) { PushStrings(L_, items); }

bool LuaVm::HasValueOnTop() {
  if (!lua_isnil(L_, -1)) return true;
  lua_pop(L_, 1);
  return false;
}

void LuaVm::Pop() { lua_pop(L_, 1); }

size_t LuaVm::TotalMemory(Kind kind) {
  const int64_t bytes = g_total_memory[static_cast<int>(kind)].load(std::memory_order_relaxed);
  return static_cast<size_t>(std::max<int64_t>(0, bytes));
}

ScriptExecution* LuaVm::current() { return g_current; }

void* LuaVm::Alloc(void* ud, void* ptr, size_t osize, size_t nsize) {
  auto* vm = static_cast<LuaVm*>(ud);
  if (nsize == 0) {
    vm->blocks_.Realloc(ptr, osize, 0);
    vm->used_ -= osize;
    g_total_memory[static_cast<int>(vm->kind_)].fetch_sub(static_cast<int64_t>(osize),
                                                          std::memory_order_relaxed);
    return nullptr;
  }
  if (nsize > osize && vm->used_ + (nsize - osize) > kMemoryLimit) return nullptr;
  void* p = vm->blocks_.Realloc(ptr, osize, nsize);
  if (p == nullptr) return nullptr;
  vm->used_ += nsize - osize;
  g_total_memory[static_cast<int>(vm->kind_)].fetch_add(
      static_cast<int64_t>(nsize) - static_cast<int64_t>(osize), std::memory_order_relaxed);
  return p;
}

void LuaVm::Hook(lua_State* L, ::lua_Debug*) {
  ScriptExecution* exec = g_current;
  if (exec == nullptr) return;
  RunningScript& running = exec->running;
  if (!running.registered && RunningScripts::SteadyNowMs() - running.started_ms >=
                                 exec->ctx->server.busy_reply_threshold_ms()) {
    if (exec->ctx->unit != nullptr && exec->ctx->unit->shares_group()) {
      // A script in the round's commit group behind other clients' commands: their replies
      // would wait for its end, which Redis sends while it is busy (IoRound::DeliverWhileBusy).
      // It stops as on a lock conflict and runs again alone, after the group's write.
      exec->ctx->unit->MarkConflicted();
      exec->aborted = true;
      lua_sethook(L, Hook, LUA_MASKLINE, 0);  // a script that catches the error still stops
      PushErrorTable(L, ErrorText(ScriptLockConflict()));
      lua_error(L);
    }
    running.registered = true;  // now busy: SCRIPT KILL and -BUSY see it
    running.name = exec->name;
    running.command.assign(exec->command.begin(), exec->command.end());
    exec->ctx->server.running_scripts().Add(&running);
  }
  if (exec->running.kill.load(std::memory_order_acquire)) {
    // From now on every line fails, so a script that catches the error still stops.
    lua_sethook(L, Hook, LUA_MASKLINE, 0);
    PushErrorTable(L, ErrorText(ScriptKilled()));
    lua_error(L);
  }
}

LuaVm::LuaVm(Kind kind, uint64_t generation) : kind_(kind), generation_(generation) {
  L_ = lua_newstate(Alloc, this);
  if (L_ == nullptr) std::abort();  // cannot allocate a few KB: the process is out of memory
  Sandbox();
  lua_sethook(L_, Hook, LUA_MASKCOUNT, kHookInterval);
}

// Closing a state (SCRIPT FLUSH, FUNCTION FLUSH, thread exit) happens on the thread that owns
// it and outside any script: a full collection first finalizes what is garbage while the state
// is whole, then lua_close frees the rest (the tables marked read-only included; the flag
// guards writes only). Redis's CVE-2024-46981 was a collection running against a state torn
// down elsewhere.
LuaVm::~LuaVm() {
  if (L_ == nullptr) return;
  lua_gc(L_, LUA_GCCOLLECT, 0);
  lua_close(L_);
}

void LuaVm::Sandbox() {
  lua_State* L = L_;
  OpenLibrary(L, luaopen_base, "");
  OpenLibrary(L, luaopen_table, LUA_TABLIBNAME);
  OpenLibrary(L, luaopen_string, LUA_STRLIBNAME);
  OpenLibrary(L, luaopen_math, LUA_MATHLIBNAME);
  OpenLibrary(L, luaopen_cjson, "cjson");
  lua_getglobal(L, "cjson");
  GuardCjsonEncode(L, lua_gettop(L));
  lua_pop(L, 1);
  OpenLibrary(L, OpenBitLibrary, "bit");
  OpenLibrary(L, OpenStructLibrary, "struct");
  OpenLibrary(L, OpenCmsgpackLibrary, "cmsgpack");
  for (const char* name :
       {"print", "getfenv", "setfenv", "dofile", "loadfile", "newproxy", "module", "require"}) {
    lua_pushnil(L);
    lua_setglobal(L, name);
  }
  OpenRedisApi(L);
  lua_pushcfunction(L, ScriptPcall);
  lua_setglobal(L, "pcall");
  // Redis 7.0 keeps its scripts' error handler as this global (scripts can see and call it).
  lua_pushcfunction(L, ErrorHandler);
  lua_setglobal(L, "__redis__err__handler");
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, kFunctionsKey);

  // Redis 7.0's sandbox: the globals table itself, read-only, whose metatable (read-only too,
  // as getmetatable(_G) hands it out) turns a missing name into an error; the library tables
  // read-only. Only the host writes the globals (KEYS and ARGV, in Run).
  lua_pushvalue(L, LUA_GLOBALSINDEX);
  const int globals = lua_gettop(L);
  for (const char* name :
       {"string", "table", "math", "coroutine", "redis", "cjson", "bit", "struct", "cmsgpack"}) {
    ProtectGlobal(L, globals, name);
  }
  lua_pushvalue(L, globals);
  lua_setfield(L, LUA_REGISTRYINDEX, kGlobalsKey);
  lua_newtable(L);
  lua_pushcfunction(L, MissingGlobal);
  lua_setfield(L, -2, "__index");
  lua_enablereadonlytable(L, -1, 1);
  lua_setmetatable(L, globals);
  lua_enablereadonlytable(L, globals, 1);
  ProtectStringMetatable(L);
  lua_settop(L, 0);
}

std::optional<uint32_t> LuaVm::Tag(std::string_view sha) const {
  auto it = tags_.find(sha);
  if (it == tags_.end()) return std::nullopt;
  return it->second;
}

bool LuaVm::Compiled(std::string_view sha) {
  lua_getfield(L_, LUA_REGISTRYINDEX, kFunctionsKey);
  lua_pushlstring(L_, sha.data(), sha.size());
  lua_rawget(L_, -2);
  const bool found = lua_isfunction(L_, -1);
  lua_pop(L_, 2);
  return found;
}

Status LuaVm::Compile(std::string_view sha, std::string_view body) {
  if (Compiled(sha)) return Status::Ok();
  if (luaL_loadbuffer(L_, body.data(), body.size(), "@user_script") != 0) {
    std::string message = lua_isstring(L_, -1) ? lua_tostring(L_, -1) : "unknown error";
    lua_pop(L_, 1);
    return ScriptCompile(message);
  }
  lua_getfield(L_, LUA_REGISTRYINDEX, kFunctionsKey);
  lua_pushlstring(L_, sha.data(), sha.size());
  lua_pushvalue(L_, -3);
  lua_rawset(L_, -3);
  lua_pop(L_, 2);
  return Status::Ok();
}

void LuaVm::PushGlobals() { lua_getfield(L_, LUA_REGISTRYINDEX, kGlobalsKey); }

void LuaVm::Run(std::string_view sha, Args keys, Args argv, ScriptExecution& exec,
                protocol::ReplyWriter& out) {
  lua_State* L = L_;
  lua_getfield(L, LUA_REGISTRYINDEX, kGlobalsKey);
  lua_enablereadonlytable(L, -1, 0);  // only the host writes the real globals, only here
  PushStrings(L, keys);
  lua_setfield(L, -2, "KEYS");
  PushStrings(L, argv);
  lua_setfield(L, -2, "ARGV");
  lua_enablereadonlytable(L, -1, 1);
  lua_pop(L, 1);
  lua_getfield(L, LUA_REGISTRYINDEX, kFunctionsKey);
  lua_pushlstring(L, sha.data(), sha.size());
  lua_rawget(L, -2);
  lua_remove(L, -2);
  CallTop(0, exec, out);
}

void LuaVm::CallTop(int nargs, ScriptExecution& exec, protocol::ReplyWriter& out) {
  lua_State* L = L_;
  const int base = lua_gettop(L) - nargs;  // the function
  lua_pushcfunction(L, ErrorHandler);
  lua_insert(L, base);
  int rc;
  {
    CurrentScope scope(exec);
    rc = lua_pcall(L, nargs, 1, base);
  }
  if (exec.running.kill.load() || exec.aborted) lua_sethook(L, Hook, LUA_MASKCOUNT, kHookInterval);
  if (!exec.aborted) {
    if (rc == 0) {
      WriteLuaValue(L, -1, exec.resp, out);
    } else {
      ReplyError(out, exec);
    }
  }
  lua_settop(L, base - 1);
  if (used_ > kMemoryLimit / 2) lua_gc(L, LUA_GCCOLLECT, 0);
}

// The error on top of the stack as Redis 7.0 replies it: the error's text, then where the
// script raised it ("script: <name>, on @user_script:3.").
void LuaVm::ReplyError(protocol::ReplyWriter& out, const ScriptExecution& exec) {
  lua_State* L = L_;
  if (!lua_istable(L, -1)) {  // out of memory: the handler did not run
    const char* message = lua_isstring(L, -1) ? lua_tostring(L, -1) : "unknown error";
    return server::ReplyError(out, ScriptRunError(exec.name, message));
  }
  const int t = lua_gettop(L);
  lua_getfield(L, t, "err");
  std::string text = lua_isstring(L, -1) ? lua_tostring(L, -1) : "ERR unknown error";
  lua_getfield(L, t, "source");
  lua_getfield(L, t, "line");
  if (lua_isstring(L, -2) && lua_isnumber(L, -1)) {
    text += " script: " + exec.name + ", on " + lua_tostring(L, -2) + ":" +
            std::to_string(lua_tointeger(L, -1)) + ".";
  }
  lua_settop(L, t);
  // The script's own error text (its code included), replied as it is.
  out.Error(text);
}

}  // namespace sluice::server
