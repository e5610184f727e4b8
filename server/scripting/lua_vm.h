// Room server/scripting: Lua scripts and functions (EVAL, FCALL), and the known library scripts
// run natively (native/). Over the server core.
//
// The Lua 5.1 virtual machine scripts run in: one per I/O thread (thread_local), built with
// Redis's sandbox (base, table, string, math, cjson, bit, struct and cmsgpack; no os, io,
// loadfile, dofile, require, print; globals and library tables read-only), its functions
// compiled once per thread and cached by SHA1. A state is rebuilt when the script cache's
// generation changes (SCRIPT FLUSH). Memory of every state is bounded by its allocator; a script
// that needs more gets an error and the state stays usable.
// Not thread-safe: a LuaVm is used only by its own thread (ForThread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "protocol/reply_writer.h"
#include "server/core/command.h"
#include "server/core/running_scripts.h"
#include "server/scripting/lua_block_cache.h"
#include "server/scripting/lua_script_cache.h"
#include "sluice/status.h"

struct lua_State;
struct lua_Debug;

namespace sluice::server {

class ServerState;

// The live busy-reply-threshold (ms): how long a script runs before it counts as busy.
int64_t BusyThresholdMs(ServerState& server);

// SCRIPT KILL (functions=false) and FUNCTION KILL (functions=true), with Redis 7.0's replies: OK,
// UNKILLABLE for a script that wrote, BUSY when only the other kind runs, else NOTBUSY.
void KillRunningScript(CommandContext& ctx, bool functions);

// A script in execution: what the `redis` API needs. Lives on the stack of the command that
// runs the script, for that one run.
struct ScriptExecution {
  CommandContext* ctx = nullptr;  // the EVAL/FCALL's context: store, server, client, unit
  std::string name;               // the SHA1 (EVAL) or function name (FCALL), for error texts
  Args command;                   // the EVAL/FCALL as sent (FUNCTION STATS, once it is busy)
  bool read_only = false;         // EVAL_RO, FCALL_RO or the no-writes flag
  bool allow_cross_slot = false;  // the allow-cross-slot-keys flag (cluster mode)
  int resp = 2;                   // the protocol redis.call replies come in (redis.setresp)
  // A redis.call met a key it did not declare whose stripe another unit holds: the script stops
  // at once (no pcall can catch it) and the dispatcher runs it again holding every stripe.
  bool aborted = false;
  RunningScript running;  // registered for SCRIPT KILL while it runs
};

class LuaVm {
 public:
  enum class Kind { kEval = 0, kFunctions = 1 };
  static constexpr size_t kMemoryLimit = size_t{256} << 20;  // bytes per state

  // This thread's state of `kind`, rebuilt first when it was built for another generation.
  static LuaVm& ForThread(Kind kind, uint64_t generation);
  // A state of `kind` owned by the caller, not this thread's (FUNCTION LOAD validates in one).
  static std::unique_ptr<LuaVm> Create(Kind kind);
  // Bytes every thread's Lua states of `kind` hold now (INFO used_memory_lua / _vm_eval for
  // kEval, used_memory_vm_functions for kFunctions).
  static size_t TotalMemory(Kind kind);

  LuaVm(const LuaVm&) = delete;
  LuaVm& operator=(const LuaVm&) = delete;
  ~LuaVm();

  lua_State* state() { return L_; }
  uint64_t generation() const { return generation_; }
  bool Compiled(std::string_view sha);
  // A small value the caller keeps with a compiled script (EVAL: its shebang flags), so a
  // call by SHA1 needs neither the shared cache nor the body. nullopt when none was set.
  std::optional<uint32_t> Tag(std::string_view sha) const;
  void SetTag(std::string_view sha, uint32_t tag) { tags_.insert_or_assign(std::string(sha), tag); }
  // Compiles `body` as the function for `sha` (a no-op when already compiled). The chunk is
  // named "@user_script", so positions read "user_script:3:". Errors: ScriptCompile(...).
  Status Compile(std::string_view sha, std::string_view body);
  // Calls the compiled function of `sha` with the KEYS and ARGV globals set and writes its
  // reply, or the error it raised, to `out` (Redis's conversion rules, out's protocol).
  // Requires Compiled(sha).
  void Run(std::string_view sha, Args keys, Args argv, ScriptExecution& exec,
           protocol::ReplyWriter& out);
  // Calls the function on top of the stack (popping it) with `nargs` arguments below it in the
  // same protected way, writing its reply to `out`. For FCALL.
  void CallTop(int nargs, ScriptExecution& exec, protocol::ReplyWriter& out);

  // The script running on this thread (nullptr when none): the `redis` API's context.
  static ScriptExecution* current();
  // Redis 7.0's error handler (makes errors {err=..., source=..., line=...}): for callers that
  // run Lua code in a protected call of their own (FUNCTION LOAD).
  static int ErrorHandler(lua_State* L);
  void PushGlobals();         // pushes the real globals table (behind the scripts' read-only view)
  void PushArgs(Args items);  // pushes a table {items[0], items[1], ...}
  bool HasValueOnTop();       // false (popping it) when the top of the stack is nil
  void Pop();                 // pops the top of the stack

  // Set by the owner once it has filled a fresh state (the functions state: its libraries).
  bool prepared = false;

 private:
  LuaVm(Kind kind, uint64_t generation);
  static void* Alloc(void* ud, void* ptr, size_t osize, size_t nsize);
  static void Hook(lua_State* L, ::lua_Debug* ar);
  void Sandbox();
  void ReplyError(protocol::ReplyWriter& out, const ScriptExecution& exec);

  lua_State* L_ = nullptr;
  Kind kind_ = Kind::kEval;
  uint64_t generation_ = 0;
  size_t used_ = 0;       // bytes allocated by L_
  LuaBlockCache blocks_;  // L_'s allocator's (Alloc): outlives L_, closed in ~LuaVm
  // Looked up by string_view (transparent hash): a call by SHA1 allocates nothing.
  struct TagHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, uint32_t, TagHash, std::equal_to<>> tags_;
};

}  // namespace sluice::server
