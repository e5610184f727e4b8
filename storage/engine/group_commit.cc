#include "group_commit.h"

#include <algorithm>
#include <utility>

namespace sluice::internal {

namespace {

Status FromRocksSync(const rocksdb::Status& s) {
  if (s.ok()) return Status::Ok();
  return Status::IOError(s.ToString());
}

}  // namespace

GroupCommit::GroupCommit(rocksdb::DB* db, std::function<Status()> flush_log,
                         std::function<void()> on_synced)
    : db_(db), flush_log_(std::move(flush_log)), on_synced_(std::move(on_synced)) {
  syncer_ = std::thread([this] { Loop(); });
}

GroupCommit::~GroupCommit() { Stop(); }

void GroupCommit::Stop() {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  cv_.notify_all();
  if (syncer_.joinable()) syncer_.join();
}

void GroupCommit::Request(uint64_t ticket, Callback done) {
  // A ticket past the latest write would wait for a sequence number that may never come.
  ticket = std::min(ticket, db_->GetLatestSequenceNumber());
  if (ticket <= durable_through()) return done(Status::Ok());
  {
    std::lock_guard<std::mutex> l(mu_);
    if (!stopping_) {
      waiters_.push_back({ticket, std::move(done)});
      cv_.notify_one();
      return;
    }
  }
  done(SyncNow());  // stopped: no syncer thread any more
}

Status GroupCommit::Await(uint64_t ticket) {
  std::mutex m;
  std::condition_variable cv;
  bool finished = false;
  Status result = Status::Ok();
  Request(ticket, [&](Status s) {
    std::lock_guard<std::mutex> l(m);
    result = std::move(s);
    finished = true;
    cv.notify_one();
  });
  std::unique_lock<std::mutex> l(m);
  cv.wait(l, [&] { return finished; });
  return result;
}

Status GroupCommit::SyncNow() {
  uint64_t through = 0;
  Status s = SyncThroughLatest(&through);
  Release(through, s);
  return s;
}

Status GroupCommit::SyncThroughLatest(uint64_t* through) {
  std::lock_guard<std::mutex> l(sync_mu_);
  // Read before the fsync: every write published at this sequence number has its record in the
  // log's buffer already (RocksDB appends to the log before it publishes), so the fsync below
  // covers it. Writes published later wait for the next round.
  const uint64_t latest = db_->GetLatestSequenceNumber();
  // FlushWAL(sync=true) in two steps: the buffer's write(2) through the store's gate, then the
  // fsync, which RocksDB allows on a log that saw an error (it only reports it).
  Status s = flush_log_();
  if (s.ok()) s = FromRocksSync(db_->SyncWAL());
  if (!s.ok()) {
    *through = 0;
    return s;
  }
  *through = latest;
  uint64_t prev = durable_.load(std::memory_order_relaxed);
  while (prev < latest && !durable_.compare_exchange_weak(prev, latest)) {
  }
  if (on_synced_) on_synced_();
  return s;
}

void GroupCommit::Release(uint64_t through, const Status& s) {
  std::vector<Waiter> ready;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto covered = [&](const Waiter& w) { return !s.ok() || w.ticket <= through; };
    auto split = std::stable_partition(waiters_.begin(), waiters_.end(),
                                       [&](const Waiter& w) { return !covered(w); });
    ready.assign(std::make_move_iterator(split), std::make_move_iterator(waiters_.end()));
    waiters_.erase(split, waiters_.end());
  }
  for (Waiter& w : ready) w.done(s);
}

void GroupCommit::Loop() {
  std::unique_lock<std::mutex> l(mu_);
  for (;;) {
    cv_.wait(l, [this] { return stopping_ || !waiters_.empty(); });
    if (waiters_.empty()) return;  // stopping, nobody waits
    l.unlock();
    SyncNow();
    l.lock();
  }
}

}  // namespace sluice::internal
