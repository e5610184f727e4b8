// Client-side caching (CLIENT TRACKING), as Redis 7.0: the tracking table (key name -> the ids
// of the clients that read it through a read-only command, Redis's TrackingTable: key names
// only, every database alike), the BCAST prefixes, and the commit observer that sends the
// invalidation messages.
//
// A write to a tracked key (any unit's commit: a command, EXEC, a script, the expiry cycle or a
// read that removed an expired value) sends each of its clients one `invalidate` message and
// forgets the key; FLUSHDB/FLUSHALL send every tracking client a null invalidation and empty the
// table (SWAPDB does not: Redis 7.0 does not). BCAST clients get, per commit and per prefix, one
// message with the written keys under the prefix. A message goes to the tracking client as a
// RESP3 push, or to its REDIRECT client: a RESP3 push there, or in RESP2 a pub/sub `message` on
// `__redis__:invalidate` when that client is subscribed to anything; a RESP2 client without a
// redirect gets nothing (as Redis). Messages travel through the target's ClientOutbox, so they
// leave on the target's own I/O thread, before that client's next reply; for the writer itself
// (tracking without NOLOOP) after the reply to the write, as Redis 7.0 orders them.
//
// The dispatcher registers a read's keys before the command runs (so a write committing between
// the read and the registration cannot be missed) and again after it (a read that removed an
// expired value invalidated the key: it is tracked again, as Redis remembers keys after the
// command).
//
// Thread-safety: every method may be called from any thread; one mutex guards the table, the
// prefixes and the tracking clients. Lock order: this registry, then the client registry
// (looking a redirect up), then a client's outbox. A ClientState's `tracking` flags and
// `tracking_redirect` are atomics written under this registry's lock (CLIENT LIST reads them).
// Costs one relaxed atomic load per commit and per read while no client tracks.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sluice/store.h"

namespace sluice::server {

struct ClientState;
class ServerState;

// ClientState::tracking bits (Redis's CLIENT_TRACKING_*).
enum TrackingFlag : uint32_t {
  kTrackingOn = 1u << 0,
  kTrackingBcast = 1u << 1,
  kTrackingOptin = 1u << 2,
  kTrackingOptout = 1u << 3,
  kTrackingCaching = 1u << 4,  // CLIENT CACHING yes (OPTIN) / no (OPTOUT) for the next command
  kTrackingNoloop = 1u << 5,
  kTrackingBrokenRedir = 1u << 6,
};

namespace tracking_detail {
// The client whose unit commits on this thread (NOLOOP), and whether this thread's commits
// invalidate nothing (SWAPDB): set by TrackingRegistry's scopes below. Constant-initialised, so
// the scopes are plain TLS stores, inline (the dispatcher opens one for every command).
inline thread_local ClientState* t_committer = nullptr;
inline thread_local bool t_suppressed = false;
}  // namespace tracking_detail

class TrackingRegistry : public CommitObserver {
 public:
  // The server whose clients, limits and configuration the registry uses. Set once before
  // serving (ServerState's constructor).
  void Attach(ServerState* server) { server_ = server; }

  // CLIENT TRACKING ON with checked options (kTrackingBcast, kTrackingOptin, kTrackingOptout,
  // kTrackingNoloop) and, for BCAST, its prefixes (none: the empty prefix).
  void Enable(ClientState& client, uint64_t redirect, uint32_t options,
              std::span<const std::string_view> prefixes);
  // CLIENT TRACKING OFF, RESET, disconnect: leaves BCAST's prefixes, clears the flags. The
  // table keeps the client's id (as Redis: it is skipped when not tracking).
  void Disable(ClientState& client);

  // BCAST prefix collisions (Redis's checkPrefixCollisionsOrReply): the first new prefix that
  // overlaps one the client has (`existing` true) or a later new one; nullopt when none.
  struct Collision {
    std::string prefix;
    std::string other;
    bool existing = false;
  };
  std::optional<Collision> FindCollision(const ClientState& client,
                                         std::span<const std::string_view> prefixes);
  // The client's BCAST prefixes in byte order (CLIENT TRACKINGINFO).
  std::vector<std::string> Prefixes(const ClientState& client);

  // The client read `keys` (a read-only command's, or the declared keys of the script that ran
  // one): remembers them unless OPTIN without CACHING yes, OPTOUT with CACHING no, or BCAST.
  void Remember(ClientState& client, std::span<const std::string_view> keys);
  // Invalidates keys until the table holds at most tracking-table-max-keys (0: no limit).
  void EnforceLimit();
  bool OverLimit() const {
    const int64_t max = max_keys_.load(std::memory_order_relaxed);
    return max > 0 && total_keys_.load(std::memory_order_relaxed) > max;
  }
  void set_max_keys(int64_t max) { max_keys_.store(max, std::memory_order_relaxed); }

  // True while some client has tracking on (the dispatcher's fast path).
  bool active() const { return clients_.load(std::memory_order_relaxed) > 0; }
  // INFO: tracking_clients, tracking_total_keys, tracking_total_items, tracking_total_prefixes.
  int64_t clients() const { return clients_.load(std::memory_order_relaxed); }
  int64_t total_keys() const { return total_keys_.load(std::memory_order_relaxed); }
  int64_t total_items() const { return total_items_.load(std::memory_order_relaxed); }
  int64_t total_prefixes() const;

  void OnCommit(std::span<const KeyRef> written, uint32_t flushed_dbs) override;
  void OnExpired(std::span<const KeyRef> expired) override;

  // The client whose command commits on this thread now (NOLOOP's "the client itself"): set by
  // the dispatcher around a top-level command that commits its own unit; nullptr while a
  // commit group of several clients' commands is written.
  class CommitterScope {
   public:
    explicit CommitterScope(ClientState* client) : saved_(tracking_detail::t_committer) {
      tracking_detail::t_committer = client;
    }
    ~CommitterScope() { tracking_detail::t_committer = saved_; }
    CommitterScope(const CommitterScope&) = delete;
    CommitterScope& operator=(const CommitterScope&) = delete;

   private:
    ClientState* saved_;
  };
  // While alive, this thread's commits invalidate nothing (SWAPDB: Redis 7.0 sends nothing).
  class SuppressScope {
   public:
    SuppressScope() : saved_(tracking_detail::t_suppressed) {
      tracking_detail::t_suppressed = true;
    }
    ~SuppressScope() { tracking_detail::t_suppressed = saved_; }
    SuppressScope(const SuppressScope&) = delete;
    SuppressScope& operator=(const SuppressScope&) = delete;

   private:
    bool saved_;
  };

 private:
  struct Client {
    ClientState* state = nullptr;
    std::set<std::string> prefixes;  // BCAST
  };
  // Invalidates `keys` (the committer: `writer`, may be null). Caller holds mu_.
  void InvalidateLocked(std::span<const KeyRef> keys, ClientState* writer);
  // Sends `keys_array` (an encoded RESP array of key names, or a null) to the client `id` (its
  // redirect, or itself), as Redis's sendTrackingMessage. Caller holds mu_.
  void SendLocked(Client& target, std::string_view keys_array);
  void SendNullLocked(Client& target);
  void RemoveKeyLocked(std::unordered_map<std::string, std::vector<uint64_t>>::iterator it);

  ServerState* server_ = nullptr;
  std::atomic<int64_t> clients_{0};
  std::atomic<int64_t> total_keys_{0};
  std::atomic<int64_t> total_items_{0};
  std::atomic<int64_t> max_keys_{1000000};
  mutable std::mutex mu_;
  std::unordered_map<uint64_t, Client> tracking_;  // by client id: every client with tracking on
  std::unordered_map<std::string, std::vector<uint64_t>> table_;  // key -> client ids
  std::map<std::string, std::set<uint64_t>> prefixes_;            // BCAST prefix -> client ids
};

}  // namespace sluice::server
