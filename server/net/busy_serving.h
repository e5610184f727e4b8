// Busy serving: the clients of an I/O thread that runs a busy script are answered anyway.
//
// A script or function runs on its client's I/O thread until it ends, and that thread polls no
// socket meanwhile. Redis, single-threaded, keeps serving every client while a script is busy
// (past busy-reply-threshold): most commands get -BUSY, and SCRIPT KILL, FUNCTION KILL,
// SHUTDOWN NOSAVE and the other allow_busy commands run. New connections already go to other
// threads (Server::NextContext); BusyServing answers the connections the busy thread had before:
// once a script registers as busy (RunningScripts::Add calls Wake), the control thread looks at
// that thread's connections every kPollMs until no script is busy there, and for each one that
// is waiting for input with nothing else in flight (Connection::ServeWhileThreadBusy) runs its
// complete commands through the dispatcher, which answers them as for any client while a script
// is busy, and sends the replies itself. Each pass runs under RunningScripts::ServeWhileBusyOn,
// so the script's end waits for a pass in progress before its thread touches a connection again.
//
// Threading: ThreadConnections is thread-safe. BusyServing's Wake may be called from any thread;
// everything else runs on the control thread.
#pragma once

#include <asio.hpp>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

namespace sluice::server {

class Connection;
class RunningScripts;

// The connections one I/O thread serves.
class ThreadConnections {
 public:
  void Add(const std::shared_ptr<Connection>& connection);
  void Remove(const Connection* connection);  // also from ~Connection
  // The connections still alive, held for the caller's pass.
  std::vector<std::shared_ptr<Connection>> Snapshot() const;

 private:
  mutable std::mutex mu_;
  std::unordered_map<const Connection*, std::weak_ptr<Connection>> connections_;
};

class BusyServing {
 public:
  static constexpr int kPollMs = 5;

  // `threads`: the thread running each I/O context, filled before the control thread runs.
  BusyServing(asio::io_context& control, RunningScripts& scripts,
              const std::vector<std::thread::id>& threads, size_t contexts);
  BusyServing(const BusyServing&) = delete;
  BusyServing& operator=(const BusyServing&) = delete;

  // Shared with the connections, which may outlive this (their last handlers are destroyed
  // with their io_context).
  const std::shared_ptr<ThreadConnections>& connections(size_t context) {
    return connections_[context];
  }
  // A script became busy on some thread: start looking (any thread).
  void Wake();

 private:
  void Tick();

  asio::io_context& control_;
  RunningScripts& scripts_;
  const std::vector<std::thread::id>& threads_;
  std::vector<std::shared_ptr<ThreadConnections>> connections_;  // one per I/O context
  asio::steady_timer timer_;
  bool ticking_ = false;  // control thread only
};

}  // namespace sluice::server
