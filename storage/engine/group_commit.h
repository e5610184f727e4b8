// GroupCommit: makes the write-ahead log durable for many writers with one fsync.
//
// A write's durability ticket is the RocksDB sequence number it was applied at (or any later
// one: Store::DurabilityTicket() returns the latest, which covers every write applied and so
// visible so far). Writers ask to be told when the log is fsynced through their ticket; one
// syncer thread reads the latest sequence number, fsyncs once (RocksDB's FlushWAL(sync): the
// buffered bytes go to the OS, then every live log file is synced), and releases every waiter
// whose ticket that covered, all at once. Waiters that arrive during an fsync are served by the
// next one, which is where the grouping comes from: N concurrent writers cost about two fsyncs,
// not N.
//
// Thread-safety: every method may be called from any thread. Callbacks run on the syncer
// thread (or inline, on the caller's thread, when the ticket is already durable or the group
// has stopped), must be fast and must not call back into GroupCommit.
#pragma once

#include <rocksdb/db.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "sluice/status.h"

namespace sluice::internal {

class GroupCommit {
 public:
  using Callback = std::function<void(Status)>;

  // `flush_log` hands the log's buffer to the OS (Store::Impl::FlushLog: it must not touch the
  // log after a write error); the syncer then fsyncs with DB::SyncWAL. `on_synced` runs after
  // every successful fsync (stats), on the thread that synced.
  GroupCommit(rocksdb::DB* db, std::function<Status()> flush_log, std::function<void()> on_synced);
  ~GroupCommit();  // Stop()s
  GroupCommit(const GroupCommit&) = delete;
  GroupCommit& operator=(const GroupCommit&) = delete;

  // Calls done(OK) once the log is fsynced through `ticket`, done(error) if the fsync that
  // would have covered it failed (the write may then be lost in a power failure).
  void Request(uint64_t ticket, Callback done);
  // Request's blocking form: returns once the log is fsynced through `ticket` (or failed to be).
  Status Await(uint64_t ticket);
  // Fsyncs now, on the calling thread, through everything applied so far (everysec, shutdown).
  // Waiters it covers are released.
  Status SyncNow();

  // The highest ticket known durable.
  uint64_t durable_through() const { return durable_.load(std::memory_order_acquire); }

  // Ends the syncer thread after a last fsync that serves every pending waiter. Later
  // Requests are served inline by SyncNow. Idempotent.
  void Stop();

 private:
  struct Waiter {
    uint64_t ticket;
    Callback done;
  };
  void Loop();
  // Fsyncs through the latest sequence number; returns it (0 on failure) with the status.
  Status SyncThroughLatest(uint64_t* through);
  // Calls back every waiter whose ticket is <= through (all of them on failure).
  void Release(uint64_t through, const Status& s);

  rocksdb::DB* db_;
  std::function<Status()> flush_log_;
  std::function<void()> on_synced_;
  std::atomic<uint64_t> durable_{0};
  std::mutex sync_mu_;  // one fsync at a time (SyncNow and the syncer)

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Waiter> waiters_;  // guarded by mu_
  bool stopping_ = false;        // guarded by mu_
  std::thread syncer_;
};

}  // namespace sluice::internal
