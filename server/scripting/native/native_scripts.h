// Native library scripts (docs/scripting.md, "Native library scripts"): a registry of the Lua
// scripts well-known rate-limiter libraries send (keyed by the SHA1 of the exact body; the
// bodies and where they come from are in server/scripting/native/library_scripts/), each with a C++
// op that does what the body does, in a unit holding the same keys: the same key ops in the same
// order on ctx.txn(), so the same `now`, the same stored keys, values and TTLs and the same reply.
// EVAL/EVALSHA look the SHA1 up when they compile a script, and try the op before running Lua
// (TryRunNativeScript); a call whose op keeps to its declared keys runs as a plain data command,
// in the connection's commit group (NativeScriptRunsAsDataCall). An op runs only the
// calls it has proved cannot fail: on any input whose Lua run would raise an error or leave the
// common path (bad arguments, a key of another type, an overflow), it declines before it stages
// anything, and the body runs in Lua as it would without the registry. So the errors, their text
// and any partial writes are always the interpreter's own.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "server/core/command.h"
#include "server/core/stat_counter.h"

namespace sluice::server {

// One recognised script: where its body comes from and what runs instead.
struct NativeScript {
  const char* sha;      // SHA1 of the exact body, lower-case hex
  size_t bytes;         // the body's length
  const char* name;     // stable id for INFO: "<library>_<script>"
  const char* library;  // npm / PyPI package name, or the Go module's repository
  const char* version;  // the package version (Go: the module's major version) of the body
  bool writes;          // the body calls write commands (EVAL_RO of it runs in Lua)
  // The op touches only the keys the call declares (every op but clear_keys, whose KEYS needs
  // every stripe), so the call can run as a plain data command (DataCallCheck, command.h).
  bool declared_keys_only;
};

inline constexpr size_t kNativeScriptCount = 13;

// Every recognised script, in INFO order.
const std::array<NativeScript, kNativeScriptCount>& NativeScripts();
// The index of the script whose body hashes to `sha` (any case), or -1.
int FindNativeScript(std::string_view sha);
// False when no recognised body is `bytes` long: EVAL of it need not be hashed to know it is
// not one of them.
bool MayBeNativeScriptBody(size_t bytes);

// Runs counted per recognised script, for INFO native_scripts. Thread-safe (relaxed atomics:
// statistics, not synchronisation).
class NativeScriptStats {
 public:
  void CountNative(int index) { native_[index].fetch_add(1, std::memory_order_relaxed); }
  void CountInterpreted(int index) { interpreted_[index].fetch_add(1, std::memory_order_relaxed); }
  int64_t native(int index) const { return native_[index].load(std::memory_order_relaxed); }
  int64_t interpreted(int index) const {
    return interpreted_[index].load(std::memory_order_relaxed);
  }
  void Reset();

 private:
  std::array<StatCounter, kNativeScriptCount> native_;
  std::array<StatCounter, kNativeScriptCount> interpreted_;
};

// EVAL/EVALSHA's hook, called with the script's unit planned (ctx.txn()) and its arguments
// validated; `index` is FindNativeScript of the script's SHA1 (-1: not recognised). When the
// script is recognised, native-scripts is yes, and its op takes this call, the op runs on
// ctx.txn(), writes the reply to ctx.out, is counted, and this returns true. It also returns
// true, having replied and counted nothing, when the op met a key the unit did not declare
// (ctx.txn() conflicted: the unit's owner runs the call again holding every stripe). Otherwise
// it has touched nothing and returns false: run the body in Lua, then call
// CountInterpretedScript.
bool TryRunNativeScript(CommandContext& ctx, int index, Args keys, Args argv, bool read_only);

// Whether a call of recognised script `index` (-1: none) with at least one key may run as a
// plain data command (DataCallCheck): native-scripts is yes, the op keeps to its declared keys
// and is allowed in this call (EVAL_RO of a writing body runs in Lua).
bool NativeScriptRunsAsDataCall(const CommandContext& ctx, int index, bool read_only);

// Counts an interpreted run of script `index` (-1: not recognised, nothing to count), unless the
// run's unit conflicted (that attempt is discarded and runs again, and counts then).
void CountInterpretedScript(CommandContext& ctx, int index);

// The body of INFO's "native_scripts" section (without its "# Native_scripts" header).
std::string NativeScriptsInfo(CommandContext& ctx);

}  // namespace sluice::server
