// RunningScripts: the scripts and functions in execution, as the dispatcher's -BUSY check,
// SCRIPT KILL / FUNCTION KILL and SHUTDOWN see them. Part of the gate (server/core), so the
// dispatcher needs nothing from the scripting room. Thread-safe: every method may be called from
// any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
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
  // Registers a script that has run past busy-reply-threshold, then calls on_busy (below).
  void Add(RunningScript* script);
  // Unregisters it; waits first for a ServeWhileBusyOn pass over its thread's clients to end,
  // so the thread's own handlers never run beside one.
  void Remove(RunningScript* script);
  // Called on the script's thread each time a script is registered (server/net/busy_serving.h
  // starts answering the thread's other clients), with the serving lock held: no
  // ServeWhileBusyOn pass runs meanwhile, so it may touch that thread's connections. It must not
  // call into RunningScripts. Set it before any script runs and clear it after the last has
  // ended.
  void set_on_busy(std::function<void()> on_busy) { on_busy_ = std::move(on_busy); }
  // Runs `serve` when a registered (busy) script runs on `thread`, and returns whether it did.
  // The script's Remove waits until `serve` returns: while it runs, the thread is still inside
  // the script and touches none of its other connections. `serve` must not wait for anything
  // that thread holds (its keys' locks) and must not call Remove.
  template <typename Serve>
  bool ServeWhileBusyOn(std::thread::id thread, Serve&& serve) {
    std::lock_guard<std::mutex> serving(serving_mu_);
    if (!BusyOn(thread)) return false;
    serve();
    return true;
  }
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
  std::mutex serving_mu_;  // held by a ServeWhileBusyOn pass; taken before mu_
  mutable std::mutex mu_;
  std::vector<RunningScript*> running_;
  std::function<void()> on_busy_;
  std::atomic<int> count_{0};
};

}  // namespace sluice::server
