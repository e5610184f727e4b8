// Store::Impl's background and shared parts: the everysec thread's idle tidying (flushing
// deletions, giving the heap's free pages back), the expiry thread's loop, the stats, and the
// point reads every command file uses.
#include <rocksdb/cache.h>
#include <rocksdb/table.h>

#include <algorithm>
#include <chrono>
#include <iterator>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "store_impl.h"

namespace sluice {

using internal::FromRocks;

void Store::Impl::TidyIfIdle(uint64_t& last_seq, int& quiet_seconds) {
  // The flush runs on RocksDB's thread (a 256 MB memtable takes a few seconds); its memory is
  // free once it is done. Later trims catch what compactions the flush started have freed.
  constexpr int kReleaseAfterFlushS = 5;
  constexpr int kReleaseEveryS = 60;
  const uint64_t seq = db_->GetLatestSequenceNumber();
  if (seq != last_seq) {
    // The expiry state saved once the store went quiet is the store's own write, not activity:
    // counting it would start the idle flush's and the heap trim's count over.
    const bool only_saved_state = seq == last_seq + 1 && seq == expiry_.state_seq();
    last_seq = seq;
    if (!only_saved_state) {
      quiet_seconds = 0;
      return;
    }
  }
  const int flush_at = options_.idle_flush_after_s;
  if (flush_at <= 0) return;
  ++quiet_seconds;
  if (quiet_seconds == flush_at) FlushIfDeletionsHeld();
  const int since_release = quiet_seconds - flush_at - kReleaseAfterFlushS;
  if (options_.release_memory_when_idle && since_release >= 0 &&
      since_release % kReleaseEveryS == 0) {
    ReleaseFreeHeapMemory();
  }
}

void Store::Impl::FlushIfDeletionsHeld() {
  constexpr uint64_t kMinDeletions = 1000;  // fewer are not worth a table file
  const bool deletions_held =
      std::any_of(cf_handles_.begin(), cf_handles_.end(), [&](rocksdb::ColumnFamilyHandle* cf) {
        uint64_t deletions = 0;
        return db_->GetIntProperty(cf, "rocksdb.num-deletes-active-mem-table", &deletions) &&
               deletions >= kMinDeletions;
      });
  // Sorted sets' score elements are erased with SingleDelete, which that property leaves out.
  const bool single_deletes_held =
      std::any_of(std::begin(element_memtables_), std::end(element_memtables_),
                  [&](const internal::NewestMemTable& p) {
                    return p.SingleDeletesInCurrent() >= kMinDeletions;
                  });
  if (!deletions_held && !single_deletes_held) return;
  rocksdb::FlushOptions options;
  options.wait = false;  // the tick goes on; RocksDB's flush thread does the work
  options.allow_write_stall = true;
  // Every family, not only those holding the deletions: a write-ahead log is deleted only once
  // every family has flushed what it holds, and `meta`'s few count records would keep the logs
  // of the whole burst on disk (up to max_total_wal_size). Empty memtables flush nothing.
  db_->Flush(options, cf_handles_);  // a failure leaves the memtables as they were
}

// glibc keeps freed pages inside its heap (only the top is returned by free): after a burst, the
// memtables' arena blocks and compaction buffers stay in the RSS. malloc_trim walks the free
// chunks and returns their whole pages; other C libraries are left alone.
void Store::Impl::ReleaseFreeHeapMemory() {
  DropDeadCacheBlocks();  // first: the blocks it frees are what the trim gives back
#ifdef __GLIBC__
  malloc_trim(0);
#endif
  idle_memory_releases_.fetch_add(1, std::memory_order_relaxed);
}

void Store::Impl::ExpiryLoop() {
  const int hz = std::clamp(options_.active_expiry_hz, 1, 500);  // Redis's hz range
  const auto period = std::chrono::microseconds(1000000 / hz);
  std::unique_lock<std::mutex> l(bg_mu_);
  while (!bg_cv_.wait_for(l, period, [this] { return stopping_; })) {
    l.unlock();
    // Redis: 25% of the cycle's period at the default effort, up to 43% at effort 10.
    const int percent = internal::ExpiryCycleParams::ForEffort(expire_effort()).time_percent;
    RunExpiryCycle(period.count() * percent / 100);
    expiry_.SaveStateWhenQuiet();
    l.lock();
  }
}

Store::Stats Store::Impl::GetStats() const {
  Stats st;
  st.expired_keys = expired_keys_.load(std::memory_order_relaxed);
  uint64_t v = 0;
  // Aggregated: GetIntProperty answers for the default family alone, and collections' elements,
  // streams and expiry live in their own families.
  if (db_->GetAggregatedIntProperty("rocksdb.total-sst-files-size", &v)) {
    st.disk_bytes += int64_t(v);
  }
  rocksdb::VectorLogPtr wals;
  if (db_->GetSortedWalFiles(wals).ok()) {
    for (const auto& w : wals) st.disk_bytes += static_cast<int64_t>(w->SizeFileBytes());
  }
  if (db_->GetAggregatedIntProperty("rocksdb.cur-size-all-mem-tables", &v)) {
    st.memtable_bytes = int64_t(v);
  }
  st.last_sync_unix_ms = last_sync_unix_ms_.load(std::memory_order_relaxed);
  st.wal_syncs = wal_syncs_.load(std::memory_order_relaxed);
  expiry_.AddStats(&st);
  st.idle_memory_releases = idle_memory_releases_.load(std::memory_order_relaxed);
  const internal::RecordCache::Counters cache = record_cache_.counters();
  st.record_cache_hits = static_cast<int64_t>(cache.hits);
  st.record_cache_misses = static_cast<int64_t>(cache.misses);
  st.record_cache_bytes = static_cast<int64_t>(cache.bytes);
  const internal::IteratorPool::Counts iterators = iterators_.counts();
  st.iterators_reused = static_cast<int64_t>(iterators.reused);
  st.iterators_made = static_cast<int64_t>(iterators.made);
  st.read_ahead_fills = read_ahead_fills_.load(std::memory_order_relaxed);
  st.read_ahead_hits = read_ahead_hits_.load(std::memory_order_relaxed);
  for (const char* running : {"rocksdb.num-running-flushes", "rocksdb.num-running-compactions"}) {
    if (db_->GetIntProperty(running, &v)) st.background_running += int64_t(v);
  }
  for (const char* pending : {"rocksdb.mem-table-flush-pending", "rocksdb.compaction-pending"}) {
    if (db_->GetAggregatedIntProperty(pending, &v)) st.background_pending += int64_t(v);
  }
  {
    std::lock_guard<std::mutex> l(write_error_mu_);
    st.writes_refused = writes_refused_.load(std::memory_order_relaxed);
    st.write_error = write_error_;
  }
  return st;
}

size_t Store::Impl::DropDeadCacheBlocks() {
  const auto* table =
      db_->GetOptions().table_factory->GetOptions<rocksdb::BlockBasedTableOptions>();
  if (table == nullptr || !table->block_cache) return 0;
  rocksdb::Cache& cache = *table->block_cache;
  uint64_t live = 0;
  if (!db_->GetAggregatedIntProperty("rocksdb.total-sst-files-size", &live)) return 0;
  const size_t before = cache.GetUsage();
  // Cached blocks are uncompressed, so a live file can fill more than its size: only a cache
  // well past what the live files could hold is mostly dead blocks.
  if (before <= 4 * live + (size_t{1} << 20)) return 0;
  cache.EraseUnRefEntries();
  const size_t after = cache.GetUsage();
  return before > after ? before - after : 0;
}

void Store::Impl::set_block_cache_bytes(size_t bytes) {
  const auto* table =
      db_->GetOptions().table_factory->GetOptions<rocksdb::BlockBasedTableOptions>();
  if (table != nullptr && table->block_cache) table->block_cache->SetCapacity(bytes);
}

// ---- Reads shared by every command

const internal::NewestMemTable* Store::Impl::NewestMemTableOf(
    const rocksdb::ColumnFamilyHandle* cf) const {
  if (cf == db_->DefaultColumnFamily()) return &keys_memtable_;
  for (int i = 0; i < internal::kNumElementCfs; ++i) {
    if (cf == element_cfs_[i]) return &element_memtables_[i];
  }
  return nullptr;
}

bool Store::Impl::ReadFromNewestMemTable(const internal::NewestMemTable& newest,
                                         std::string_view key, const rocksdb::Snapshot* snapshot,
                                         rocksdb::PinnableSlice* value, bool* found) const {
  // Read before the lookup, as RocksDB's point read takes its sequence number.
  const uint64_t visible =
      snapshot != nullptr ? snapshot->GetSequenceNumber() : db_->GetLatestSequenceNumber();
  switch (newest.ReadNewest(key, visible, value->GetSelf())) {
    case internal::NewestMemTable::Read::kFound:
      value->PinSelf();
      *found = true;
      return true;
    case internal::NewestMemTable::Read::kDeleted:
      *found = false;
      return true;
    case internal::NewestMemTable::Read::kUnknown:
      break;
  }
  return false;
}

Status Store::Impl::ReadPoint(rocksdb::ColumnFamilyHandle* cf, std::string_view key,
                              rocksdb::PinnableSlice* value, bool* found,
                              const rocksdb::Snapshot* snapshot, bool* deep) {
  value->Reset();
  if (deep != nullptr) *deep = false;
  const internal::NewestMemTable* newest = NewestMemTableOf(cf);
  if (newest != nullptr && ReadFromNewestMemTable(*newest, key, snapshot, value, found)) {
    return Status::Ok();
  }
  if (deep != nullptr) *deep = true;
  rocksdb::ReadOptions ro;
  ro.snapshot = snapshot;
  auto s = db_->Get(ro, cf, rocksdb::Slice(key.data(), key.size()), value);
  *found = s.ok();
  if (s.ok() || s.IsNotFound()) return Status::Ok();
  return FromRocks(s);
}

Result<std::optional<internal::Entry>> Store::Impl::ReadEntry(const std::string& raw_key,
                                                              const rocksdb::Snapshot* snapshot) {
  rocksdb::PinnableSlice raw;
  bool found = false;
  Status s = ReadRaw(raw_key, &raw, &found, snapshot);
  if (!s.ok()) return s;
  if (!found) return std::optional<internal::Entry>();
  auto view = internal::DecodeValue(raw.ToStringView());
  if (!view) return Status::Corruption("invalid value encoding");
  return std::optional<internal::Entry>(internal::Entry{
      view->kind, view->expire_at_ms, std::string(view->payload), view->raw_encoding});
}

Result<std::optional<internal::Entry>> Store::Impl::ReadLive(const std::string& raw_key,
                                                             int64_t now_ms,
                                                             const rocksdb::Snapshot* snapshot) {
  auto e = ReadEntry(raw_key, snapshot);
  if (e.ok() && e->has_value() && internal::IsExpired((*e)->expire_at_ms, now_ms)) {
    return std::optional<internal::Entry>();
  }
  return e;
}

}  // namespace sluice
