// Physical removal of expired data: the element compaction filter (stale collection elements)
// and the active expiry cycle (Redis's activeExpireCycle, adapted to an ordered keyspace). Keys
// themselves are removed only by units (the cycle, or a locked read), so that the keyspace
// counts change in the same write (keyspace_counts.h).
#include "expiry.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <limits>
#include <memory>

#include "collection.h"
#include "store_impl.h"
#include "txn.h"

namespace sluice {
namespace internal {
namespace {

// One compaction's filter of an element column family. Sub-keys of one collection are
// contiguous, so the last metadata looked up is remembered.
class ElementFilter final : public rocksdb::CompactionFilter {
 public:
  ElementFilter(rocksdb::DB* db, const Clock* clock) : db_(db), clock_(clock) {}

  Decision FilterV2(int /*level*/, const rocksdb::Slice& key, ValueType type,
                    const rocksdb::Slice& /*value*/, std::string* /*new_value*/,
                    std::string* /*skip_until*/) const override {
    if (type != ValueType::kValue) return Decision::kKeep;
    uint64_t version = 0;
    std::string_view element;
    if (!DecodeSubKey(key.ToStringView(), &meta_key_, &version, &element)) return Decision::kKeep;
    if (meta_key_ != cached_key_) {
      cached_key_ = meta_key_;
      cached_ = LookUp();
    }
    if (cached_ == kUnknown) return Decision::kKeep;
    return cached_ == version ? Decision::kKeep : Decision::kRemove;
  }
  const char* Name() const override { return "sluice.ElementFilter"; }

 private:
  static constexpr uint64_t kUnknown = ~uint64_t{0};
  // The live version of cached_key_'s collection, 0 when there is none, kUnknown on doubt.
  uint64_t LookUp() const {
    std::string raw;
    auto s = db_->Get(rocksdb::ReadOptions(), db_->DefaultColumnFamily(), cached_key_, &raw);
    if (s.IsNotFound()) return 0;
    if (!s.ok()) return kUnknown;
    auto v = DecodeValue(raw);
    if (!v) return kUnknown;
    if (!IsCollection(v->kind) || IsExpired(v->expire_at_ms, clock_->NowMs())) return 0;
    auto meta = DecodeMeta(v->payload);
    return meta ? meta->version : kUnknown;
  }

  rocksdb::DB* db_;
  const Clock* clock_;
  mutable std::string meta_key_;
  mutable std::string cached_key_;
  mutable uint64_t cached_ = kUnknown;
};

// Redis's ACTIVE_EXPIRE_CYCLE_KEYS_PER_LOOP: keys with a TTL examined per sample.
constexpr int kSampleSize = 20;
// Keys without a TTL are walked over too (Redis never sees them); cap that walk per sample
// and per cycle so a keyspace of persistent keys costs little.
constexpr int kMaxVisitsPerSample = 20 * kSampleSize;
constexpr int kMaxVisitsWithoutTtl = 5000;
// Expired keys removed per unit (one lock round, one write, one count record), at most. Larger
// units hold more stripes for longer; see docs/engine.md ("Expiry") for the measurements.
constexpr size_t kRemoveBatch = 128;

// Keeps every entry (the store is not open yet).
class KeepAll final : public rocksdb::CompactionFilter {
 public:
  bool Filter(int, const rocksdb::Slice&, const rocksdb::Slice&, std::string*,
              bool*) const override {
    return false;
  }
  const char* Name() const override { return "sluice.KeepAll"; }
};

}  // namespace

std::unique_ptr<rocksdb::CompactionFilter> ElementFilterFactory::CreateCompactionFilter(
    const rocksdb::CompactionFilter::Context& /*context*/) {
  rocksdb::DB* db = db_.load(std::memory_order_acquire);
  if (db == nullptr) return std::make_unique<KeepAll>();
  return std::make_unique<ElementFilter>(db, clock_.get());
}

void ExpiryCandidates::Add(std::string_view raw_key, int64_t at_ms) {
  if (n == keys.size()) {
    keys.emplace_back();
    expire_at_ms.emplace_back();
  }
  keys[n].assign(raw_key);
  expire_at_ms[n] = at_ms;
  ++n;
}

}  // namespace internal

using internal::DecodeExpiry;
using internal::IsExpired;
using internal::kNoExpiry;

// A candidate whose stripe's write mark is at most seen_seq has not been written since the
// iterator read it (lock_pool.h), so what the iterator read (stored, with that expiry) is still
// what is stored: it is removed without a read, and counted out as a key with an expiry. Any
// other is read again under the lock and removed only if still expired. The unit's time is read
// once the stripes are held, like any unit's; a candidate not expired then (the clock went
// back) stays. One write: the deletions and the count record change together.
int64_t Store::Impl::RemoveExpired(internal::ExpiryCandidates& c, uint64_t seen_seq,
                                   int64_t* next_due_ms) {
  const size_t n = c.n;
  c.n = 0;
  if (n == 0) return 0;
  internal::LockPool::MultiGuard guard(locks_, c.keys, n);
  internal::Txn txn(*this);
  for (size_t i = 0; i < n; ++i) {
    const std::string& key = c.keys[i];
    if (locks_.WriteMark(key) <= seen_seq) {
      if (IsExpired(c.expire_at_ms[i], txn.now_ms())) {
        txn.RemoveExpired(key);
      } else {
        *next_due_ms = std::min(*next_due_ms, c.expire_at_ms[i]);
      }
      continue;
    }
    auto v = txn.ReadView(key);  // an expired value found here is removed by the commit
    if (!v.ok()) {
      *next_due_ms = std::min(*next_due_ms, txn.now_ms());  // look again at the next pass
    } else if (v->has_value() && (*v)->expire_at_ms != kNoExpiry) {
      *next_due_ms = std::min(*next_due_ms, (*v)->expire_at_ms);
    }
  }
  const int64_t removed = txn.expired_found();
  // A removal's write never reports failure (Txn::Commit); a refused one removed nothing.
  if (!txn.Commit(/*durable=*/false).ok() || writes_refused()) {
    *next_due_ms = std::min(*next_due_ms, txn.now_ms());
    return 0;
  }
  return removed;
}

// One cycle: from the pass's cursor, sample keys with a TTL, remove the expired ones, and keep
// going while more than 25% of a sample was expired and the time budget lasts (Redis's
// activeExpireCycle). A pass ends at the end of the keyspace; the next one starts only once the
// earliest expiry the pass saw (or written since it began) is due.
int64_t Store::Impl::RunExpiryCycle(int64_t budget_us) {
  constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
  if (writes_refused()) return 0;  // nothing could be removed
  if (!expiry_pass_active_) {
    if (clock_->NowMs() <= next_expiry_due_ms_.load(std::memory_order_relaxed)) return 0;
    // Notes from now on lower the hint again; the pass accounts for what is stored. The fence
    // orders the reset before the pass's iterators read the latest sequence: a note made after
    // a commit became visible (Txn::Commit) is either kept or its value seen by the pass.
    next_expiry_due_ms_.exchange(kNever);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    expiry_pass_active_ = true;
    expiry_pass_min_ms_ = kNever;
    expiry_cursor_.clear();
  }
  expiry_scans_.fetch_add(1, std::memory_order_relaxed);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(budget_us);
  // Read before the iterator is made: its view is at this sequence or later.
  const uint64_t seen_seq = db_->GetLatestSequenceNumber();
  rocksdb::ReadOptions ro;
  ro.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro));
  it->Seek(expiry_cursor_);
  int64_t removed = 0;
  int visits_without_ttl = 0;
  while (it->Valid()) {
    int sampled = 0;
    int visited = 0;
    int expired = 0;
    const int64_t now_ms = clock_->NowMs();
    for (;
         it->Valid() && sampled < internal::kSampleSize && visited < internal::kMaxVisitsPerSample;
         it->Next()) {
      ++visited;
      auto expiry = DecodeExpiry(it->value().ToStringView());
      if (!expiry || *expiry == kNoExpiry) continue;
      ++sampled;
      if (IsExpired(*expiry, now_ms)) {
        ++expired;
        expiry_batch_.Add(it->key().ToStringView(), *expiry);
      } else {
        expiry_pass_min_ms_ = std::min(expiry_pass_min_ms_, *expiry);
      }
    }
    if (expiry_batch_.n + internal::kSampleSize > internal::kRemoveBatch) {
      removed += RemoveExpired(expiry_batch_, seen_seq, &expiry_pass_min_ms_);
    }
    if (sampled == 0) visits_without_ttl += visited;
    bool keep_going =
        sampled == 0 ? visits_without_ttl < internal::kMaxVisitsWithoutTtl : expired * 4 > sampled;
    if (!keep_going || std::chrono::steady_clock::now() >= deadline) break;
  }
  if (it->Valid()) {
    expiry_cursor_ = it->key().ToString();
  } else {  // the pass is complete (once the last candidates are removed)
    expiry_cursor_.clear();
    expiry_pass_active_ = false;
  }
  removed += RemoveExpired(expiry_batch_, seen_seq, &expiry_pass_min_ms_);
  if (!expiry_pass_active_) NoteExpiry(expiry_pass_min_ms_);
  return removed;
}

}  // namespace sluice
