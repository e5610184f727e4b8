// The script cache every connection shares (Redis's lua_scripts dict): SHA1 -> script body,
// filled by EVAL and SCRIPT LOAD, emptied by SCRIPT FLUSH. Each I/O thread compiles the bodies
// into its own Lua state (server/lua_vm.h); a flush bumps generation(), and a thread whose Lua
// state was built for an older generation drops it and starts a fresh one, so every thread's
// compiled copies go with the flush. Also the registry of running scripts behind SCRIPT KILL
// and the -BUSY replies. Thread-safe: every method may be called from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

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

// One script in execution, as SCRIPT KILL and the busy check see it. Owned by the running
// script's thread; registered in RunningScripts once it has run past busy-reply-threshold,
// until it ends.
struct RunningScript {
  int64_t started_ms = 0;          // steady-clock ms
  std::atomic<bool> wrote{false};  // it ran a write command: it cannot be killed
  std::atomic<bool> kill{false};   // SCRIPT KILL / FUNCTION KILL asked it to stop
  bool is_function = false;        // FCALL (FUNCTION KILL) rather than EVAL (SCRIPT KILL)
  bool registered = false;         // in RunningScripts (touched by its own thread only)
  std::thread::id thread;          // the thread running it (the server hands new clients
                                   // to other threads while it is busy)
};

class RunningScripts {
 public:
  void Add(RunningScript* script);
  void Remove(RunningScript* script);
  // What runs longer than `threshold_ms` at `now_ms` (steady-clock ms). Lock-free when no
  // script runs at all.
  enum class BusyKind { kNone, kScript, kFunction };
  bool empty() const { return count_.load(std::memory_order_acquire) == 0; }
  BusyKind Busy(int64_t now_ms, int64_t threshold_ms) const;
  enum class KillResult { kNotBusy, kUnkillable, kKilled };
  // Asks every busy script of the kind (function or not) to stop; kUnkillable when a busy one
  // has written (nothing is asked then).
  KillResult Kill(bool functions, int64_t now_ms, int64_t threshold_ms);
  // Whether a script or function registered as busy runs on `thread`. Lock-free when no script
  // runs at all.
  bool BusyOn(std::thread::id thread) const;
  static int64_t SteadyNowMs();

 private:
  mutable std::mutex mu_;
  std::vector<RunningScript*> running_;
  std::atomic<int> count_{0};
};

}  // namespace sluice::server
