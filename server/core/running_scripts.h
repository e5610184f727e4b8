// RunningScripts: the scripts and functions in execution, as the dispatcher's -BUSY check,
// SCRIPT KILL / FUNCTION KILL and SHUTDOWN see them. Part of the gate (server/core), so the
// dispatcher needs nothing from the scripting room. Thread-safe: every method may be called from
// any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace sluice::server {

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
  // Set by its own thread before it is registered, then read-only (FUNCTION STATS): the
  // function's name (an EVAL's SHA1) and the command that runs it, as sent.
  std::string name;
  std::vector<std::string> command;
};

// What FUNCTION STATS shows of the script that has run longest.
struct RunningScriptView {
  std::string name;
  std::vector<std::string> command;
  int64_t duration_ms = 0;
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
  // The registered (busy) script that started first; nullopt when none.
  std::optional<RunningScriptView> Longest(int64_t now_ms) const;
  static int64_t SteadyNowMs();

 private:
  mutable std::mutex mu_;
  std::vector<RunningScript*> running_;
  std::atomic<int> count_{0};
};

}  // namespace sluice::server
