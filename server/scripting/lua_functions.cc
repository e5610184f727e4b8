#include "server/scripting/lua_functions.h"

#include <cctype>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <lua5.1/lua.hpp>
#include <memory>
#include <set>
#include <sstream>

#include "server/core/args.h"
#include "server/core/durable_file.h"
#include "server/core/errors.h"
#include "server/core/running_scripts.h"
#include "server/scripting/lua_vm.h"

namespace sluice::server {

namespace {

constexpr const char* kEnvMetaKey = "sluice.fn.envmeta";  // metatable of the chunks' env
constexpr const char* kEnvKey = "sluice.fn.env";          // the chunks' env
constexpr const char* kLoadEnvKey = "sluice.fn.loadenv";  // globals while a library loads
constexpr const char* kFunctionsKey =
    "sluice.fn.table";  // name -> {callback, no_writes, no_cluster}
constexpr std::string_view kDumpMagic = "SLUICE-FUNCTIONS-1\n";

std::atomic<uint64_t> g_next_generation{1ull << 62};

// The library being loaded on this thread (register_function appends to it).
thread_local Library* g_loading = nullptr;

int Missing(lua_State* L) {
  const char* name = lua_tostring(L, 2);
  return luaL_error(L, "%s", NonexistentGlobal(name == nullptr ? "?" : name).c_str());
}

int Readonly(lua_State* L) { return luaL_error(L, "%s", ReadonlyTable().c_str()); }

// Sets on the table on top a metatable erroring on missing names and on writes.
void Protect(lua_State* L) {
  lua_newtable(L);
  lua_pushcfunction(L, Missing);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, Readonly);
  lua_setfield(L, -2, "__newindex");
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "__metatable");
  lua_setmetatable(L, -2);
}

// Function names are case-insensitive, as Redis 7.0's function dictionary (FCALL TEST runs
// `test`); they are kept and listed as registered. Names are ASCII letters, digits and '_'.
std::string FoldedName(std::string_view name) {
  std::string folded(name);
  for (char& c : folded) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return folded;
}

bool ValidName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

[[noreturn]] void RaiseStatus(lua_State* L, const Status& status) {
  const std::string text = ErrorText(status);
  lua_newtable(L);
  lua_pushlstring(L, text.data(), text.size());
  lua_setfield(L, -2, "err");
  lua_error(L);
  std::abort();
}

// The string at `index`, embedded NULs included (a name with one is invalid, not cut short).
std::string LuaString(lua_State* L, int index) {
  size_t len = 0;
  const char* text = lua_tolstring(L, index, &len);
  return std::string(text, len);
}

// A library's load-time code runs at most kLoadTimeoutMs (Redis's LOAD_TIMEOUT_MS), checked
// every kLoadHookInterval instructions; then every line fails, so a pcall cannot hide it.
constexpr int64_t kLoadTimeoutMs = 500;
constexpr int kLoadHookInterval = 100000;
thread_local int64_t g_load_started_ms = 0;

void LoadHook(lua_State* L, lua_Debug*) {
  if (RunningScripts::SteadyNowMs() - g_load_started_ms <= kLoadTimeoutMs) return;
  lua_sethook(L, LoadHook, LUA_MASKLINE, 0);
  RaiseStatus(L, FunctionLoadTimeout());
}

// Reads the {function_name=, callback=, flags=, description=} form into the function table
// entry; leaves the callback on top of the stack.
void ReadNamedArguments(lua_State* L, FunctionInfo* fn) {
  bool have_name = false, have_callback = false;
  lua_pushnil(L);
  while (lua_next(L, 1) != 0) {
    const char* key = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "";
    const std::string_view k = key;
    // Numbers pass as strings (lua_isstring), as in Redis.
    if (k == "function_name") {
      if (!lua_isstring(L, -1)) RaiseStatus(L, ScriptFunctionNameNotString());
      fn->name = LuaString(L, -1);
      have_name = true;
    } else if (k == "callback") {
      if (!lua_isfunction(L, -1)) RaiseStatus(L, ScriptFunctionCallbackNotFunction());
      have_callback = true;
    } else if (k == "description") {
      if (!lua_isstring(L, -1)) RaiseStatus(L, ScriptFunctionDescriptionNotString());
      fn->description = LuaString(L, -1);
    } else if (k == "flags") {
      if (!lua_istable(L, -1)) RaiseStatus(L, ScriptFunctionFlagsNotTable());
      for (int i = 1;; ++i) {
        lua_rawgeti(L, -1, i);
        if (lua_isnil(L, -1)) {
          lua_pop(L, 1);
          break;
        }
        const std::string flag = lua_isstring(L, -1) ? lua_tostring(L, -1) : "";
        lua_pop(L, 1);
        if (flag != "no-writes" && flag != "allow-oom" && flag != "allow-stale" &&
            flag != "no-cluster" && flag != "allow-cross-slot-keys") {
          RaiseStatus(L, ScriptFunctionBadFlag());
        }
        fn->no_writes = fn->no_writes || flag == "no-writes";
        fn->no_cluster = fn->no_cluster || flag == "no-cluster";
        fn->flags.push_back(flag);
      }
    } else {
      RaiseStatus(L, ScriptFunctionBadArgument());
    }
    lua_pop(L, 1);
  }
  if (!have_name) RaiseStatus(L, ScriptFunctionNamedNoName());
  if (!have_callback) RaiseStatus(L, ScriptFunctionNamedNoCallback());
  lua_getfield(L, 1, "callback");
}

// redis.register_function(name, callback) or redis.register_function{...}, at load time only.
int RegisterFunction(lua_State* L) {
  if (g_loading == nullptr) RaiseStatus(L, ScriptFunctionNotLoading());
  FunctionInfo fn;
  if (lua_gettop(L) == 1) {
    if (!lua_istable(L, 1)) RaiseStatus(L, ScriptFunctionSingleArgument());
    ReadNamedArguments(L, &fn);
  } else if (lua_gettop(L) == 2) {
    if (!lua_isstring(L, 1)) RaiseStatus(L, ScriptFunctionNeedsName());
    if (!lua_isfunction(L, 2)) RaiseStatus(L, ScriptFunctionNeedsCallback());
    fn.name = LuaString(L, 1);
    lua_pushvalue(L, 2);
  } else {
    RaiseStatus(L, ScriptFunctionWrongArgs());
  }
  if (!ValidName(fn.name)) RaiseStatus(L, BadLibraryName());
  for (const FunctionInfo& other : g_loading->functions) {
    if (other.name == fn.name) RaiseStatus(L, ScriptFunctionDuplicate());
  }
  // functions[folded name] = {callback, no_writes, no_cluster, name}. A library may register
  // names differing only in case (Redis's library dictionary is case-sensitive); FCALL then
  // finds the first (Redis: whichever its dictionary links first).
  const int callback = lua_gettop(L);
  const std::string folded = FoldedName(fn.name);
  lua_getfield(L, LUA_REGISTRYINDEX, kFunctionsKey);
  lua_pushlstring(L, folded.data(), folded.size());
  lua_rawget(L, -2);
  const bool taken = !lua_isnil(L, -1);
  lua_pop(L, 1);
  if (taken) {
    lua_settop(L, 0);
    g_loading->functions.push_back(std::move(fn));
    return 0;
  }
  lua_pushlstring(L, folded.data(), folded.size());
  lua_createtable(L, 4, 0);
  lua_pushvalue(L, callback);
  lua_rawseti(L, -2, 1);
  lua_pushboolean(L, fn.no_writes);
  lua_rawseti(L, -2, 2);
  lua_pushboolean(L, fn.no_cluster);
  lua_rawseti(L, -2, 3);
  lua_pushlstring(L, fn.name.data(), fn.name.size());
  lua_rawseti(L, -2, 4);
  lua_rawset(L, -3);
  lua_settop(L, 0);
  g_loading->functions.push_back(std::move(fn));
  return 0;
}

// Builds, once per state, the load-time globals ({redis = {register_function, log, LOG_*,
// REDIS_VERSION, REDIS_VERSION_NUM}}), the chunks' env and the function table.
void PrepareState(LuaVm& vm) {
  lua_State* L = vm.state();
  lua_getfield(L, LUA_REGISTRYINDEX, kEnvKey);
  const bool ready = !lua_isnil(L, -1);
  lua_pop(L, 1);
  if (ready) return;
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, kFunctionsKey);
  lua_newtable(L);  // load-time globals
  lua_newtable(L);  // load-time redis
  vm.PushGlobals();
  lua_getfield(L, -1, "redis");
  for (const char* name : {"log", "LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING",
                           "REDIS_VERSION", "REDIS_VERSION_NUM"}) {
    lua_getfield(L, -1, name);
    lua_setfield(L, -4, name);
  }
  lua_pop(L, 2);
  lua_pushcfunction(L, RegisterFunction);
  lua_setfield(L, -2, "register_function");
  Protect(L);
  lua_setfield(L, -2, "redis");
  Protect(L);
  lua_setfield(L, LUA_REGISTRYINDEX, kLoadEnvKey);
  // The chunks' env: an empty table whose misses go to the load-time globals while a library
  // loads and to the real globals afterwards (functions keep this env when they run).
  lua_newtable(L);
  lua_newtable(L);
  vm.PushGlobals();
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, Readonly);
  lua_setfield(L, -2, "__newindex");
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "__metatable");
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, kEnvMetaKey);
  lua_setmetatable(L, -2);
  lua_setfield(L, LUA_REGISTRYINDEX, kEnvKey);
}

// Points the chunks' env at the load-time globals (loading) or the real ones.
void SetEnvTarget(LuaVm& vm, bool loading) {
  lua_State* L = vm.state();
  lua_getfield(L, LUA_REGISTRYINDEX, kEnvMetaKey);
  if (loading) {
    lua_getfield(L, LUA_REGISTRYINDEX, kLoadEnvKey);
  } else {
    vm.PushGlobals();
  }
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
}

// "#!lua name=<name>" -> name; the code to compile is the code with that line emptied.
Status ParseMetadata(std::string_view code, std::string* name, std::string* body) {
  if (code.substr(0, 2) != "#!") return MissingLibraryMetadata();
  const size_t eol = code.find('\n');
  // Redis splits the line as sdssplitargs does: name="foo" is name=foo.
  std::vector<std::string> parts;
  if (!SplitArgs(code.substr(0, eol), &parts)) return InvalidLibraryMetadata();
  const std::string_view engine =
      parts.empty() ? std::string_view{} : std::string_view(parts[0]).substr(2);
  // Redis looks the engine up case-insensitively (`#!LUA`), and the option name too (`NAME=`).
  if (!EqualsIgnoreCase(engine, "lua")) return EngineNotFound(engine);
  bool named = false;
  for (size_t j = 1; j < parts.size(); ++j) {
    if (!EqualsIgnoreCase(std::string_view(parts[j]).substr(0, 5), "name=")) {
      return InvalidMetadata(parts[j]);
    }
    if (named) return LibraryNameRepeated();
    *name = parts[j].substr(5);
    named = true;
  }
  if (!named) return LibraryNameMissing();
  if (!ValidName(*name)) return BadLibraryName();
  body->assign(eol == std::string_view::npos ? std::string_view{} : code.substr(eol));
  return Status::Ok();
}

void PutLength(std::string* out, uint64_t n) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((n >> (8 * i)) & 0xFF));
}

bool GetLength(std::string_view* in, uint64_t* n) {
  if (in->size() < 8) return false;
  *n = 0;
  for (int i = 0; i < 8; ++i) *n |= uint64_t{static_cast<unsigned char>((*in)[i])} << (8 * i);
  in->remove_prefix(8);
  return true;
}

std::string Encode(const std::map<std::string, Library>& libs) {
  std::string out(kDumpMagic);
  PutLength(&out, libs.size());
  for (const auto& [name, lib] : libs) {
    PutLength(&out, lib.code.size());
    out += lib.code;
  }
  return out;
}

bool Decode(std::string_view payload, std::vector<std::string>* codes) {
  if (payload.substr(0, kDumpMagic.size()) != kDumpMagic) return false;
  payload.remove_prefix(kDumpMagic.size());
  uint64_t count = 0;
  if (!GetLength(&payload, &count)) return false;
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t n = 0;
    if (!GetLength(&payload, &n) || n > payload.size()) return false;
    codes->emplace_back(payload.substr(0, n));
    payload.remove_prefix(n);
  }
  return payload.empty();
}

}  // namespace

Status LoadLibraryInto(LuaVm& vm, std::string_view code, Library* library) {
  std::string body;
  if (Status s = ParseMetadata(code, &library->name, &body); !s.ok()) return s;
  library->code.assign(code);
  PrepareState(vm);
  lua_State* L = vm.state();
  if (luaL_loadbuffer(L, body.data(), body.size(), "@user_function") != 0) {
    std::string message = lua_isstring(L, -1) ? lua_tostring(L, -1) : "unknown error";
    lua_pop(L, 1);
    return FunctionCompile(message);
  }
  lua_getfield(L, LUA_REGISTRYINDEX, kEnvKey);
  lua_setfenv(L, -2);
  lua_pushcfunction(L, LuaVm::ErrorHandler);
  lua_insert(L, -2);
  SetEnvTarget(vm, true);
  g_loading = library;
  const lua_Hook hook = lua_gethook(L);
  const int hook_mask = lua_gethookmask(L), hook_count = lua_gethookcount(L);
  g_load_started_ms = RunningScripts::SteadyNowMs();
  lua_sethook(L, LoadHook, LUA_MASKCOUNT, kLoadHookInterval);
  const int rc = lua_pcall(L, 0, 0, -2);
  lua_sethook(L, hook, hook_mask, hook_count);
  g_loading = nullptr;
  SetEnvTarget(vm, false);
  if (rc != 0) {
    std::string message = "ERR unknown error";
    if (lua_istable(L, -1)) {
      lua_getfield(L, -1, "err");
      if (lua_isstring(L, -1)) message = lua_tostring(L, -1);
      lua_pop(L, 1);
    } else if (lua_isstring(L, -1)) {
      message = lua_tostring(L, -1);
    }
    lua_settop(L, 0);
    return FunctionRegistering(message);
  }
  lua_settop(L, 0);
  if (library->functions.empty()) return NoFunctionsRegistered();
  return Status::Ok();
}

bool PushFunction(LuaVm& vm, std::string_view name, bool* no_cluster, std::string* registered) {
  lua_State* L = vm.state();
  PrepareState(vm);
  lua_getfield(L, LUA_REGISTRYINDEX, kFunctionsKey);
  const std::string folded = FoldedName(name);
  lua_pushlstring(L, folded.data(), folded.size());
  lua_rawget(L, -2);
  lua_remove(L, -2);
  if (lua_isnil(L, -1)) return false;
  lua_rawgeti(L, -1, 2);
  const bool no_writes = lua_toboolean(L, -1) != 0;
  lua_pop(L, 1);
  if (no_cluster != nullptr) {
    lua_rawgeti(L, -1, 3);
    *no_cluster = lua_toboolean(L, -1) != 0;
    lua_pop(L, 1);
  }
  if (registered != nullptr) {
    lua_rawgeti(L, -1, 4);
    size_t len = 0;
    const char* text = lua_tolstring(L, -1, &len);
    registered->assign(text, len);
    lua_pop(L, 1);
  }
  lua_rawgeti(L, -1, 1);
  lua_remove(L, -2);
  return no_writes;
}

FunctionRegistry::FunctionRegistry() : generation_(g_next_generation.fetch_add(1)) {}

void FunctionRegistry::set_path(std::string path) {
  std::lock_guard<std::mutex> lock(mu_);
  path_ = std::move(path);
}

Status FunctionRegistry::Validate(std::string_view code, Library* library) {
  // A throwaway state: a library that fails to load leaves nothing behind anywhere.
  std::unique_ptr<LuaVm> scratch = LuaVm::Create(LuaVm::Kind::kFunctions);
  return LoadLibraryInto(*scratch, code, library);
}

Status FunctionRegistry::LoadFromDisk() {
  std::lock_guard<std::mutex> lock(mu_);
  if (path_.empty()) return Status::Ok();
  std::ifstream in(path_, std::ios::binary);
  if (!in) return Status::Ok();
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::vector<std::string> codes;
  if (!Decode(buffer.str(), &codes)) return InternalError("corrupt functions file " + path_);
  std::map<std::string, Library> libs;
  for (const std::string& code : codes) {
    Library lib;
    if (Status s = Validate(code, &lib); !s.ok()) return s;
    libs[lib.name] = std::move(lib);
  }
  libraries_ = std::move(libs);
  generation_.store(g_next_generation.fetch_add(1), std::memory_order_release);
  return Status::Ok();
}

Status FunctionRegistry::InstallLocked(std::map<std::string, Library> libs) {
  std::map<std::string, std::string> owner;  // folded function name -> library
  for (const auto& [name, lib] : libs) {
    for (const FunctionInfo& fn : lib.functions) {
      const auto [it, added] = owner.emplace(FoldedName(fn.name), name);
      if (!added && it->second != name) return FunctionExists(fn.name);
    }
  }
  if (!path_.empty()) {
    if (const int err = WriteFileDurably(path_, Encode(libs)); err != 0) {
      return InternalError("cannot write " + path_ + ": " + std::strerror(err));
    }
  }
  libraries_ = std::move(libs);
  generation_.store(g_next_generation.fetch_add(1), std::memory_order_release);
  return Status::Ok();
}

Status FunctionRegistry::Load(std::string_view code, bool replace, std::string* name) {
  Library lib;
  if (Status s = Validate(code, &lib); !s.ok()) return s;
  std::lock_guard<std::mutex> lock(mu_);
  if (!replace && libraries_.count(lib.name) > 0) return LibraryExists(lib.name);
  // Redis names the new library's function that another library already has.
  for (const FunctionInfo& fn : lib.functions) {
    const std::string folded = FoldedName(fn.name);
    for (const auto& [other_name, other] : libraries_) {
      if (other_name == lib.name) continue;
      for (const FunctionInfo& theirs : other.functions) {
        if (FoldedName(theirs.name) == folded) return FunctionExists(fn.name);
      }
    }
  }
  std::map<std::string, Library> libs = libraries_;
  *name = lib.name;
  libs[lib.name] = std::move(lib);
  return InstallLocked(std::move(libs));
}

Status FunctionRegistry::Delete(std::string_view name) {
  std::lock_guard<std::mutex> lock(mu_);
  std::map<std::string, Library> libs = libraries_;
  if (libs.erase(std::string(name)) == 0) return LibraryNotFound();
  return InstallLocked(std::move(libs));
}

Status FunctionRegistry::Flush() {
  std::lock_guard<std::mutex> lock(mu_);
  return InstallLocked({});
}

std::string FunctionRegistry::Dump() const {
  std::lock_guard<std::mutex> lock(mu_);
  return Encode(libraries_);
}

Status FunctionRegistry::Restore(std::string_view payload, RestorePolicy policy) {
  std::vector<std::string> codes;
  if (!Decode(payload, &codes)) return BadDumpPayload();
  std::vector<Library> loaded;
  for (const std::string& code : codes) {
    Library lib;
    if (Status s = Validate(code, &lib); !s.ok()) return s;
    loaded.push_back(std::move(lib));
  }
  std::lock_guard<std::mutex> lock(mu_);
  std::map<std::string, Library> libs;
  if (policy != RestorePolicy::kFlush) libs = libraries_;
  for (Library& lib : loaded) {
    if (policy == RestorePolicy::kAppend && libs.count(lib.name) > 0) {
      return RestoredLibraryExists(lib.name);
    }
    libs[lib.name] = std::move(lib);
  }
  return InstallLocked(std::move(libs));
}

std::vector<Library> FunctionRegistry::List() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Library> out;
  for (const auto& [name, lib] : libraries_) out.push_back(lib);
  return out;
}

size_t FunctionRegistry::library_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return libraries_.size();
}

size_t FunctionRegistry::function_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = 0;
  for (const auto& [name, lib] : libraries_) n += lib.functions.size();
  return n;
}

size_t FunctionRegistry::code_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = 0;
  for (const auto& [name, lib] : libraries_) n += lib.code.size() + name.size();
  return n;
}

uint64_t FunctionRegistry::Snapshot(std::vector<std::string>* codes) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [name, lib] : libraries_) codes->push_back(lib.code);
  return generation_.load(std::memory_order_acquire);
}

}  // namespace sluice::server
