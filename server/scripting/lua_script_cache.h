// The script cache every connection shares (Redis's lua_scripts dict): SHA1 -> script body,
// filled by EVAL and SCRIPT LOAD, emptied by SCRIPT FLUSH. Each I/O thread compiles the bodies
// into its own Lua state (server/scripting/lua_vm.h); a flush bumps generation(), and a thread
// whose Lua state was built for an older generation drops it and starts a fresh one, so every
// thread's compiled copies go with the flush. (The scripts running now:
// server/core/running_scripts.h.) Thread-safe: every method may be called from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace sluice::server {

class ScriptCache {
 public:
  ScriptCache();
  // Adds `body` under its SHA1 (lower-case hex, which it returns). Idempotent.
  std::string Add(std::string_view body);
  // The body cached under `sha` (any case); nullopt when none.
  std::optional<std::string> Get(std::string_view sha) const;
  bool Exists(std::string_view sha) const;
  void Flush();  // forgets every script and bumps generation()
  // Identifies the cache's content epoch; unique across every ScriptCache of the process, so a
  // per-thread Lua state can never mistake one server's scripts for another's.
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  size_t size() const;
  size_t body_bytes() const;  // the bodies' bytes plus their SHA1 names (used_memory_scripts)

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::string> scripts_;
  size_t bytes_ = 0;
  std::atomic<uint64_t> generation_;
};

}  // namespace sluice::server
