// Per-connection state that commands read and change (selected db, protocol version, auth,
// name). Owned by the Connection; touched only on the connection's I/O thread, except the
// fields CLIENT LIST / CLIENT KILL read from other threads, which are atomic or guarded by the
// client registry's lock (see server_state.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "server/core/client_outbox.h"

namespace sluice::server {

struct CommandSpec;
struct AclUser;

// A command queued between MULTI and EXEC: its resolved spec and owned copies of its arguments
// (the read buffer they came from is reused).
struct QueuedCommand {
  const CommandSpec* spec = nullptr;
  std::vector<std::string> args;
};

// MULTI state (Redis's CLIENT_MULTI and CLIENT_DIRTY_EXEC). Touched only on the client's thread.
struct MultiState {
  bool active = false;   // between MULTI and EXEC/DISCARD
  bool aborted = false;  // a command was rejected while queuing: EXEC replies EXECABORT
  std::vector<QueuedCommand> queue;
  size_t queued_bytes = 0;  // argument bytes queued, bounded like a query buffer
};

// A key this client WATCHes, as it was when watched (server/core/watch.h).
struct WatchedKey {
  int db = 0;
  std::string key;
  int64_t expire_at_ms = -2;  // -2: missing when watched; -1: no TTL; else its expiry
};

struct ClientState {
  uint64_t id = 0;
  int db = 0;                  // SELECT; 0..kNumDatabases-1
  int resp = 2;                // HELLO 2|3
  bool authenticated = false;  // true when no password is set
  // The ACL user (server/core/acl_registry.h): its name, and the snapshot the gate checks,
  // re-read when the registry's generation moves past acl_generation. `user` and `user_name`
  // change under the client registry's lock (CLIENT LIST reads them from other threads).
  std::string user_name = "default";
  std::shared_ptr<const AclUser> user;
  uint64_t acl_generation = 0;
  bool acl_unrestricted = false;  // user->Unrestricted(), cached for the gate's fast path
  std::string name;               // CLIENT SETNAME / HELLO SETNAME
  std::string lib_name;           // CLIENT SETINFO LIB-NAME
  std::string lib_ver;            // CLIENT SETINFO LIB-VER
  std::string addr;               // "ip:port" of the peer
  std::string laddr;              // "ip:port" of our side
  int fd = -1;                    // socket descriptor, for CLIENT LIST fd=; -1 when none
  // Real wall-clock ms since the epoch (never the DEBUG CLOCK): age=, idle= and the idle timeout.
  int64_t created_ms = 0;
  // Written by the connection's thread on every command, read by CLIENT LIST and the idle sweep
  // from other threads: atomics, so the command hot path takes no shared lock.
  std::atomic<int64_t> last_interaction_ms{0};
  // The last command's lower-case name ("client|list" for subcommands), for CLIENT LIST cmd=;
  // points into the CommandTable, which outlives every connection. nullptr before any command.
  std::atomic<const std::string*> last_command{nullptr};
  MultiState multi;
  // Cluster mode (server/core/cluster_route.h), touched only on the client's thread: ASKING
  // (Redis's CLIENT_ASKING: good for the next command, or until the EXEC of a MULTI it began),
  // READONLY (a replica serves its primary's slots' reads), the slot the running command's keys
  // are in (Redis's c->slot, -1: none; a script's commands keep to it), and whether the
  // connection is TLS (redirected to the tls port).
  bool cluster_asking = false;
  bool cluster_readonly = false;
  int cluster_slot = -1;
  bool tls = false;
  std::vector<WatchedKey> watched;  // WATCH; registered in the server's WatchRegistry
  // Set by any thread's commit that touches a watched key (Redis's CLIENT_DIRTY_CAS).
  std::atomic<bool> watch_dirty{false};
  // CLIENT REPLY (Redis's CLIENT_REPLY_OFF, _SKIP_NEXT, _SKIP): the connection drops the
  // replies of a command that ran while reply_off or reply_skip was set; SKIP sets
  // reply_skip_next, which becomes reply_skip for the one command after it.
  bool reply_off = false;
  bool reply_skip_next = false;
  bool reply_skip = false;
  bool close_after_reply = false;           // QUIT, protocol error: close once replies are written
  std::atomic<bool> kill_requested{false};  // CLIENT KILL from another connection
  // Parked by a blocking command (server/core/blocking.h): CLIENT LIST flags=b, exempt from the
  // idle timeout. Written on the client's thread, read from any.
  std::atomic<bool> blocked{false};
  // Pub/sub (server/pubsub): how many channels, patterns and shard channels the client is
  // subscribed to (CLIENT LIST sub=/psub=/ssub=). Written by the registry on the client's
  // thread, read from any.
  std::atomic<int32_t> sub_channels{0};
  std::atomic<int32_t> sub_patterns{0};
  std::atomic<int32_t> sub_shard{0};
  // Subscribed to anything: Redis's CLIENT_PUBSUB (the pubsub output-buffer class; in RESP2
  // only the subscription commands, PING, QUIT and RESET are allowed).
  bool subscribed() const {
    return sub_channels.load(std::memory_order_relaxed) +
               sub_patterns.load(std::memory_order_relaxed) +
               sub_shard.load(std::memory_order_relaxed) >
           0;
  }
  // In MONITOR mode (server/core/monitors.h): CLIENT LIST flags=O. Written by the registry on
  // the client's thread, read from any.
  std::atomic<bool> monitoring{false};
  // Client-side caching (server/core/tracking.h): TrackingFlag bits (0: off) and the REDIRECT
  // client id (0: none). Written by the TrackingRegistry (and CLIENT CACHING on the client's
  // thread), read from any thread (CLIENT LIST, the senders of invalidations).
  std::atomic<uint32_t> tracking{0};
  std::atomic<uint64_t> tracking_redirect{0};
  ClientOutbox outbox;  // pub/sub messages and MONITOR lines from other threads
  // Replication (server/replication): kReplicaLink on a primary for a replica's connection
  // once it sent PSYNC/SYNC (CLIENT LIST flags=S, CLIENT KILL TYPE replica|slave), kMasterLink
  // on a replica for its link to the primary (flags=M, TYPE master). Never `normal`: Sentinel's
  // CLIENT KILL TYPE normal leaves replication alone. Written once, read from any thread.
  enum ReplKind : int { kNotRepl = 0, kReplicaLink = 1, kMasterLink = 2 };
  std::atomic<int> repl_kind{kNotRepl};
};

}  // namespace sluice::server
