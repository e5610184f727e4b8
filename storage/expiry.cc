// Physical removal of expired data: the element compaction filter (stale collection elements)
// and the active expiry cycle (Redis's activeExpireCycle, adapted to an ordered keyspace). Keys
// themselves are removed only by units (the cycle, or a locked read), so that the keyspace
// counts change in the same write (keyspace_counts.h).
#include "expiry.h"

#include <algorithm>
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

}  // namespace internal

using internal::DecodeExpiry;
using internal::IsExpired;
using internal::kNoExpiry;

// Deletes, each under its lock and only if still expired on re-reading, the given keys.
int64_t Store::Impl::RemoveIfExpired(const std::vector<std::string>& raw_keys) {
  if (raw_keys.empty()) return 0;
  internal::LockPool::MultiGuard guard(locks_, raw_keys);
  internal::Txn txn(*this);
  for (const auto& k : raw_keys) {
    if (!txn.Read(k).ok()) return 0;  // a read error: leave it to the next cycle
  }
  if (!txn.Commit(/*durable=*/false).ok()) return 0;
  return txn.expired_found();
}

// One cycle: from the pass's cursor, sample keys with a TTL, remove the expired ones, and keep
// going while more than 25% of a sample was expired and the time budget lasts (Redis's
// activeExpireCycle). A pass ends at the end of the keyspace; the next one starts only once the
// earliest expiry the pass saw (or written since it began) is due.
int64_t Store::Impl::RunExpiryCycle(int64_t budget_us) {
  constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
  if (!expiry_pass_active_) {
    if (clock_->NowMs() <= next_expiry_due_ms_.load(std::memory_order_relaxed)) return 0;
    // Writes from now on lower the hint again; the pass accounts for what is stored.
    next_expiry_due_ms_.store(kNever, std::memory_order_relaxed);
    expiry_pass_active_ = true;
    expiry_pass_min_ms_ = kNever;
    expiry_cursor_.clear();
  }
  expiry_scans_.fetch_add(1, std::memory_order_relaxed);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(budget_us);
  rocksdb::ReadOptions ro;
  ro.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro));
  it->Seek(expiry_cursor_);
  int64_t removed = 0;
  int visits_without_ttl = 0;
  while (it->Valid()) {
    int sampled = 0;
    int visited = 0;
    std::vector<std::string> expired;
    const int64_t now_ms = clock_->NowMs();
    for (;
         it->Valid() && sampled < internal::kSampleSize && visited < internal::kMaxVisitsPerSample;
         it->Next()) {
      ++visited;
      auto expiry = DecodeExpiry(it->value().ToStringView());
      if (!expiry || *expiry == kNoExpiry) continue;
      ++sampled;
      if (IsExpired(*expiry, now_ms)) {
        expired.push_back(it->key().ToString());
      } else {
        expiry_pass_min_ms_ = std::min(expiry_pass_min_ms_, *expiry);
      }
    }
    const int64_t n = RemoveIfExpired(expired);
    // Not all removed (a read error, or rewritten meanwhile): look again at the next pass.
    if (n < static_cast<int64_t>(expired.size())) expiry_pass_min_ms_ = now_ms;
    removed += n;
    if (sampled == 0) visits_without_ttl += visited;
    bool keep_going = sampled == 0 ? visits_without_ttl < internal::kMaxVisitsWithoutTtl
                                   : expired.size() * 4 > static_cast<size_t>(sampled);
    if (!keep_going || std::chrono::steady_clock::now() >= deadline) break;
  }
  if (it->Valid()) {
    expiry_cursor_ = it->key().ToString();
  } else {  // the pass is complete
    expiry_cursor_.clear();
    expiry_pass_active_ = false;
    NoteExpiry(expiry_pass_min_ms_);
  }
  return removed;
}

}  // namespace sluice
