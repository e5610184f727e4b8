// Store::Impl's durability policy (store.h, Durability): the write path, handing the log to
// the OS and fsyncing it (alone or through the group commit), the write-error latch, and the
// everysec thread.
#include <rocksdb/write_batch.h>

#include <chrono>
#include <mutex>
#include <shared_mutex>

#include "store_impl.h"
#include "write_prefetch.h"

namespace sluice {

using internal::FromRocks;

namespace {
int64_t WallMs() { return WallClock().NowMs(); }
}  // namespace

Status Store::Impl::Write(rocksdb::WriteBatch* batch, bool durable, bool defer, bool* applied) {
  if (applied != nullptr) *applied = false;
  if (batch->Count() == 0) return Status::Ok();
  {
    // Shared: writes run concurrently; a log flush waits for them (see wal_gate_).
    std::shared_lock<std::shared_mutex> gate(wal_gate_);
    if (writes_refused()) return WriteRefusal();
    // manual_wal_flush: this appends the batch to the WAL's in-memory buffer (and applies it to
    // the memtable); the buffer reaches the OS here only when it is full.
    // A range deletion (FLUSHDB, FLUSHALL) is one the newest memtables cannot see: point reads
    // go to RocksDB while it may be in one of them (memtable.h, ReadNewest).
    const bool range_delete = batch->HasDeleteRange();
    if (range_delete)
      ForEachNewestMemTable([](internal::NewestMemTable& m) { m.BeginRangeDelete(); });
    auto s = db_->Write(rocksdb::WriteOptions(), batch);
    if (range_delete)
      ForEachNewestMemTable([](internal::NewestMemTable& m) { m.EndRangeDelete(); });
    // An I/O error (a full disk, or the background error RocksDB latched) stops writes, latched
    // before the gate is released; any other failure is this write's own.
    if (!s.ok()) return s.IsIOError() ? NoteWriteError(FromRocks(s)) : FromRocks(s);
  }
  if (applied != nullptr) *applied = true;
  if (defer) return Status::Ok();
  // The fsync also hands the buffer to the OS. Either way the flush covers whatever the buffer
  // holds, other threads' records included, so our record is covered even if another
  // thread's flush (or a WAL switch) got there first.
  if (durable && durability() == Durability::kAlways) return AwaitDurable(DurabilityTicket());
  return FlushLog(DurabilityTicket());
}

void Store::Impl::PrefetchElementWrites(const rocksdb::WriteBatch& batch) const {
  internal::ElementWriteTargets targets;
  for (int i = 0; i < internal::kNumElementCfs && i < internal::ElementWriteTargets::kMax; ++i) {
    const auto cf = static_cast<internal::ElementCf>(i);
    if (element_cf(cf) == nullptr) continue;
    targets.cf_ids[targets.n] = element_cf(cf)->GetID();
    targets.memtables[targets.n++] = &element_memtable(cf);
  }
  internal::PrefetchElementWrites(batch, targets);
}

// With the gate held exclusively no write is between appending its record and publishing its
// sequence number: every record through the latest sequence is in the buffer the flush hands
// over, so flushed_through_ may say so afterwards.
Status Store::Impl::FlushLog() {
  std::unique_lock<std::shared_mutex> gate(wal_gate_);
  return FlushLogLocked();
}

Status Store::Impl::FlushLogLocked() {
  if (writes_refused()) return WriteRefusal();
  const uint64_t through = db_->GetLatestSequenceNumber();
  auto s = db_->FlushWAL(/*sync=*/false);
  if (!s.ok()) return NoteWriteError(FromRocks(s));
  // Flushes are serialized by the gate and sequence numbers only grow: a plain store.
  flushed_through_.store(through, std::memory_order_release);
  return Status::Ok();
}

// Threads that finish their writes together queue on the gate: the first one's flush covers
// the others' records, which then skip their own write(2) (and, checked before the gate, their
// wait for it).
Status Store::Impl::FlushLog(uint64_t ticket) {
  if (flushed_through_.load(std::memory_order_acquire) >= ticket) return Status::Ok();
  std::unique_lock<std::shared_mutex> gate(wal_gate_);
  if (flushed_through_.load(std::memory_order_relaxed) >= ticket) return Status::Ok();
  return FlushLogLocked();
}

Status Store::Impl::SyncWal() {
  if (writes_refused()) return WriteRefusal();
  // Everything applied by now is in the log's buffer: the fsync below covers it.
  const uint64_t through = db_->GetLatestSequenceNumber();
  Status s = group_->SyncNow();
  if (s.ok()) synced_through_.store(through, std::memory_order_release);
  return s.ok() ? s : NoteWriteError(s);
}

void Store::Impl::WhenDurable(uint64_t ticket, std::function<void(Status)> done) {
  if (durability() != Durability::kAlways) return done(FlushLog(ticket));
  if (writes_refused()) return done(WriteRefusal());
  group_->Request(ticket, [this, done = std::move(done)](Status s) {
    done(s.ok() ? std::move(s) : NoteWriteError(s));
  });
}

Status Store::Impl::AwaitDurable(uint64_t ticket) {
  if (durability() != Durability::kAlways) return FlushLog(ticket);
  if (writes_refused()) return WriteRefusal();
  Status s = group_->Await(ticket);
  return s.ok() ? s : NoteWriteError(s);
}

Status Store::Impl::NoteWriteError(const Status& cause) {
  if (cause.code() == Code::kCannotPersist) return cause;
  std::string reason = cause.message();
  bool first = false;
  {
    std::lock_guard<std::mutex> l(write_error_mu_);
    if (!writes_refused_.load(std::memory_order_relaxed)) {
      write_error_ = reason;
      writes_refused_.store(true, std::memory_order_release);
      first = true;
    } else {
      reason = write_error_;
    }
  }
  if (first && options_.on_error) {
    options_.on_error("writes refused: cannot write to " + options_.path + ": " + reason +
                      " (reads keep working; writes are accepted again once the disk can take "
                      "them)");
  }
  return Status::CannotPersist(reason);
}

void Store::Impl::ClearWriteError() {
  std::string was;
  {
    std::lock_guard<std::mutex> l(write_error_mu_);
    if (!writes_refused_.load(std::memory_order_relaxed)) return;
    was = std::move(write_error_);
    write_error_.clear();
    writes_refused_.store(false, std::memory_order_release);
  }
  if (options_.on_error) {
    options_.on_error("writes accepted again: " + options_.path + " recovered from: " + was);
  }
}

Status Store::Impl::WriteRefusal() const {
  std::lock_guard<std::mutex> l(write_error_mu_);
  return Status::CannotPersist(write_error_);
}

// RocksDB recovers by itself from a full disk once enough space is free (its SstFileManager
// polls); other errors need DB::Resume. Busy (a recovery in progress) and failures are retried
// on the next tick.
void Store::Impl::TryResume() {
  auto s = db_->Resume();
  if (s.ok()) ClearWriteError();
}

void Store::Impl::NoteSynced() {
  last_sync_unix_ms_.store(WallMs(), std::memory_order_relaxed);
  wal_syncs_.fetch_add(1, std::memory_order_relaxed);
}

void Store::Impl::EverySecLoop() {
  std::unique_lock<std::mutex> l(bg_mu_);
  int ticks = 0;
  uint64_t last_seq = db_->GetLatestSequenceNumber();
  int quiet_seconds = 0;
  while (!bg_cv_.wait_for(l, std::chrono::seconds(1), [this] { return stopping_; })) {
    l.unlock();
    TidyIfIdle(last_seq, quiet_seconds);
    iterators_.DropIdle();  // an idle iterator holds memtables and table files alive
    l.lock();
    if (writes_refused()) {
      if (++ticks % 5 == 0) {
        l.unlock();
        TryResume();
        l.lock();
      }
      continue;
    }
    if (durability() != Durability::kEverySec) continue;
    if (db_->GetLatestSequenceNumber() == synced_through_.load(std::memory_order_acquire)) continue;
    l.unlock();
    SyncWal();
    l.lock();
  }
}

}  // namespace sluice
