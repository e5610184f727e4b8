// Redis 7.0 Functions: libraries of Lua functions loaded with FUNCTION LOAD, called with FCALL.
// FunctionRegistry is the server's one copy of the libraries (name, code, the functions each
// registered), shared by every connection and persisted in one file in the data directory
// (written to a temporary file, fsynced, renamed) so they survive restarts. Each I/O thread
// runs the functions in its own Lua state (LuaVm::Kind::kFunctions), rebuilt and refilled
// from the registry when the registry's generation changes.
// Thread-safe: every FunctionRegistry method may be called from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/status.h"

namespace sluice::server {

class LuaVm;

struct FunctionInfo {
  std::string name;
  std::optional<std::string> description;
  std::vector<std::string> flags;  // as given: "no-writes", "allow-oom", ...
  bool no_writes = false;
  bool no_cluster = false;  // refused in cluster mode
};

struct Library {
  std::string name;
  std::string code;  // as loaded, shebang included
  std::vector<FunctionInfo> functions;
};

// Loads one library's code (shebang included) into `vm`'s functions state: runs it with the
// load-time API (redis.register_function, redis.log) and registers its functions in the state.
// Fills *library (name, code, functions). Errors are Redis 7.0's ("Missing library metadata",
// "Error compiling function: ...", "Error registering functions: ...", "No functions
// registered", ...).
Status LoadLibraryInto(LuaVm& vm, std::string_view code, Library* library);

// Pushes the function `name` registered in `vm` (nil when none; names are case-insensitive)
// and returns its no-writes flag; *registered gets the name as the library registered it.
bool PushFunction(LuaVm& vm, std::string_view name, bool* no_cluster = nullptr,
                  std::string* registered = nullptr);

class FunctionRegistry {
 public:
  FunctionRegistry();
  enum class RestorePolicy { kAppend, kReplace, kFlush };

  // Persistence: the file libraries are saved to; empty (the default) keeps them in memory
  // only. LoadFromDisk reads the file (a missing file is an empty registry).
  void set_path(std::string path);
  Status LoadFromDisk();

  // FUNCTION LOAD: validates `code` in a fresh Lua state and adds the library (or replaces the
  // library of the same name). *name gets its name.
  Status Load(std::string_view code, bool replace, std::string* name);
  Status Delete(std::string_view name);  // "ERR Library not found"
  Status Flush();
  std::string Dump() const;  // a payload Restore accepts (Sluice's own format, docs/scripting.md)
  Status Restore(std::string_view payload, RestorePolicy policy);

  std::vector<Library> List() const;  // by library name
  size_t library_count() const;
  size_t function_count() const;
  size_t code_bytes() const;
  // Changes with every change of the libraries; unique across the process.
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  // The libraries' code and the generation it belongs to, read together.
  uint64_t Snapshot(std::vector<std::string>* codes) const;

 private:
  // Checks that `libs` can replace the current set (no function name twice) and installs it,
  // persisting first. Call with mu_ held.
  Status InstallLocked(std::map<std::string, Library> libs);
  static Status Validate(std::string_view code, Library* library);

  mutable std::mutex mu_;
  std::map<std::string, Library> libraries_;
  std::string path_;
  std::atomic<uint64_t> generation_;
};

}  // namespace sluice::server
