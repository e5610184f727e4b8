// The crash report: when the process dies of SIGSEGV, SIGBUS, SIGFPE, SIGILL or SIGABRT, the
// server writes to its log (stderr) the signal, a stack trace of the crashing thread and the
// command and client that thread was running, as Redis's bug report does, then dies of the same
// signal (the exit status says which).
#pragma once

#include "server/core/command.h"

namespace sluice::server {

struct ClientState;

// Installs the handler for the signals above (once per process; later calls do nothing). Call
// it early in main, before the I/O threads start.
void InstallCrashHandler();

// Gives the calling thread its own alternate signal stack (64 KB, kept for the thread's life),
// so that a stack overflow on it still gets its report: call it first in every thread that
// runs commands (the I/O threads). InstallCrashHandler does it for the main thread.
void InstallCrashAltStackForThisThread();

// Marks the command the calling thread runs, for the report, for this object's scope. Scopes
// nest (a script's redis.call shadows its EVAL, then restores it). Cost: two thread-local
// stores; no allocation. `client` and `args` must outlive the scope (the dispatcher's own).
namespace crash_detail {
// The command the thread runs (constant-initialised: plain TLS loads and stores, inline).
inline thread_local const ClientState* t_client = nullptr;
inline thread_local Args t_args;
}  // namespace crash_detail

class RunningCommandScope {
 public:
  RunningCommandScope(const ClientState& client, Args args)
      : previous_client_(crash_detail::t_client), previous_args_(crash_detail::t_args) {
    crash_detail::t_client = &client;
    crash_detail::t_args = args;
  }
  ~RunningCommandScope() {
    crash_detail::t_client = previous_client_;
    crash_detail::t_args = previous_args_;
  }
  RunningCommandScope(const RunningCommandScope&) = delete;
  RunningCommandScope& operator=(const RunningCommandScope&) = delete;

 private:
  const ClientState* previous_client_;
  Args previous_args_;
};

}  // namespace sluice::server
