// WatchRegistry: which clients WATCH which keys, and the commit observer that marks them dirty.
// Every unit of work that commits tells the registry the keys it wrote (Store::CommitObserver),
// while it still holds their locks; EXEC takes the locks of its watched keys before it looks at
// its dirty flag, so a write either dirtied the client before EXEC looked or waits for EXEC.
// Costs nothing measurable when no client watches anything (one relaxed atomic load per commit).
// Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sluice/store.h"

namespace sluice::server {

struct ClientState;

class WatchRegistry : public CommitObserver {
 public:
  // Registers `client` as watching (db, key); `existed` says whether the key held a live value
  // then (FLUSHDB/FLUSHALL only dirty watchers of keys that existed, as Redis). Call under the
  // key's lock, before reading its state, so no commit falls between the two.
  void Watch(ClientState* client, int db, std::string_view key, bool existed);
  // Forgets every key `client` watches and clears its dirty flag (EXEC, DISCARD, UNWATCH, RESET,
  // disconnect).
  void UnwatchAll(ClientState* client);

  void OnCommit(std::span<const KeyRef> written, uint32_t flushed_dbs) override;

 private:
  struct Watcher {
    ClientState* client;
    bool existed;
  };
  static std::string Slot(int db, std::string_view key);  // db byte + key

  std::atomic<int64_t> watches_{0};  // registrations, for the fast path
  std::mutex mu_;
  std::unordered_map<std::string, std::vector<Watcher>> by_key_;
};

}  // namespace sluice::server
