// Per-connection state that commands read and change (selected db, protocol version, auth,
// name). Owned by the Connection; touched only on the connection's I/O thread, except the
// fields CLIENT LIST / CLIENT KILL read from other threads, which are atomic or guarded by the
// client registry's lock (see server_state.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace sluice::server {

struct ClientState {
  uint64_t id = 0;
  int db = 0;                  // SELECT; 0..kNumDatabases-1
  int resp = 2;                // HELLO 2|3
  bool authenticated = false;  // true when no password is set
  std::string name;            // CLIENT SETNAME / HELLO SETNAME
  std::string lib_name;        // CLIENT SETINFO LIB-NAME
  std::string lib_ver;         // CLIENT SETINFO LIB-VER
  std::string addr;            // "ip:port" of the peer
  std::string laddr;           // "ip:port" of our side
  int fd = -1;                 // socket descriptor, for CLIENT LIST fd=; -1 when none
  // Real wall-clock ms since the epoch (never the DEBUG CLOCK): age=, idle= and the idle timeout.
  int64_t created_ms = 0;
  // Written by the connection's thread on every command, read by CLIENT LIST and the idle sweep
  // from other threads: atomics, so the command hot path takes no shared lock.
  std::atomic<int64_t> last_interaction_ms{0};
  // The last command's lower-case name ("client|list" for subcommands), for CLIENT LIST cmd=;
  // points into the CommandTable, which outlives every connection. nullptr before any command.
  std::atomic<const std::string*> last_command{nullptr};
  bool close_after_reply = false;           // QUIT, protocol error: close once replies are written
  std::atomic<bool> kill_requested{false};  // CLIENT KILL from another connection
};

}  // namespace sluice::server
