// MIGRATE's cached connections, as Redis keeps them: one connection per target host:port is kept
// open after a MIGRATE and reused by the next one to the same target (with the database it last
// selected there, so SELECT is sent only when it changes); a connection unused for 10 seconds
// is closed, and at most 64 are kept. Redis's MIGRATE_SOCKET_CACHE_ITEMS and _TTL.
//
// Thread-safety: every method may be called from any thread. A connection is used by one
// MIGRATE at a time: Take removes it from the cache until Return puts it back, so two MIGRATEs
// to one target at once use two connections (the second one returned is closed).
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "server/commands/migrate_link.h"

namespace sluice::server {

class MigrateCache {
 public:
  static constexpr size_t kMaxItems = 64;
  static constexpr std::chrono::seconds kIdleTtl{10};

  // A connection to one target, taken from the cache or made now.
  struct Lease {
    std::string target;  // "host:port"
    MigrateLink link;
    int64_t last_db = -1;  // the database selected on it; -1: none yet
    bool reused = false;   // it came from the cache
  };

  MigrateCache() = default;
  ~MigrateCache();  // closes every cached connection and stops the idle sweeper
  MigrateCache(const MigrateCache&) = delete;
  MigrateCache& operator=(const MigrateCache&) = delete;

  // The cached connection to host:port, or a new one (connected within timeout_ms); false when
  // none could be made.
  bool Take(const std::string& host, const std::string& port, int timeout_ms, Lease* out);
  // Keeps a healthy connection for the next MIGRATE (closes it when one to that target is
  // already cached). A connection that failed is dropped by not returning it.
  void Return(Lease&& lease);
  // Connections cached now (INFO and tests).
  size_t size() const;

 private:
  struct Entry {
    MigrateLink link;
    int64_t last_db = -1;
    std::chrono::steady_clock::time_point last_use;
  };
  void SweepLoop();

  mutable std::mutex mu_;
  std::condition_variable wake_;          // the sweeper: an entry arrived, or stop
  std::map<std::string, Entry> entries_;  // guarded by mu_
  bool stop_ = false;                     // guarded by mu_
  std::thread sweeper_;                   // started with the first Return
};

// The process's cache, used by MIGRATE.
MigrateCache& TheMigrateCache();

}  // namespace sluice::server
