// IteratorPool: leases, refreshes and the idle sweep (iterator_pool.h has the contract).
#include "iterator_pool.h"

#include <algorithm>
#include <string>
#include <utility>

#include "forwarding_iterator.h"
#include "memtable.h"

namespace sluice::internal {

struct IteratorPool::Entry {
  uint32_t cf_id = 0;
  std::string lower, upper;
  rocksdb::Slice lower_slice, upper_slice;
  rocksdb::ReadOptions read_options;  // points at the slices: an Entry never moves
  std::unique_ptr<rocksdb::Iterator> it;
  bool leased_since_sweep = true;
};

// A lease: forwards to the entry's iterator and gives the entry back when deleted. Its first
// positioning after a refresh runs in a FreshIteratorRead.
class IteratorPool::Leased final : public ForwardingIterator {
 public:
  Leased(IteratorPool* pool, std::unique_ptr<Entry> e, bool refreshed)
      : ForwardingIterator(e->it.get()), pool_(pool), e_(std::move(e)), fresh_pending_(refreshed) {}
  ~Leased() override { pool_->GiveBack(std::move(e_)); }

  void SeekToFirst() override {
    Position([&] { inner()->SeekToFirst(); });
  }
  void SeekToLast() override {
    Position([&] { inner()->SeekToLast(); });
  }
  void Seek(const rocksdb::Slice& target) override {
    Position([&] { inner()->Seek(target); });
  }
  void SeekForPrev(const rocksdb::Slice& target) override {
    Position([&] { inner()->SeekForPrev(target); });
  }

 private:
  template <typename F>
  void Position(F&& seek) {
    if (!fresh_pending_) return seek();
    fresh_pending_ = false;
    FreshIteratorRead fresh;
    seek();
  }

  IteratorPool* pool_;
  std::unique_ptr<Entry> e_;
  bool fresh_pending_;
};

IteratorPool::IteratorPool() = default;
IteratorPool::~IteratorPool() { Clear(); }

std::unique_ptr<rocksdb::Iterator> IteratorPool::Lease(rocksdb::DB* db,
                                                       rocksdb::ColumnFamilyHandle* cf,
                                                       std::string_view lower,
                                                       std::string_view upper,
                                                       const rocksdb::Snapshot* snapshot) {
  auto at_snapshot = [&] {
    return snapshot == nullptr || snapshot->GetSequenceNumber() == db->GetLatestSequenceNumber();
  };
  if (!at_snapshot()) {
    declined_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  std::unique_ptr<Entry> e = Take(cf->GetID());
  const bool refreshed = e != nullptr;
  if (!refreshed) {
    e = std::make_unique<Entry>();
    e->cf_id = cf->GetID();
  }
  e->lower.assign(lower);
  e->upper.assign(upper);
  e->lower_slice = rocksdb::Slice(e->lower);
  e->upper_slice = rocksdb::Slice(e->upper);
  if (refreshed) {
    if (!e->it->Refresh().ok()) return nullptr;  // not refreshable: dropped, the caller makes one
  } else {
    e->read_options.iterate_lower_bound = &e->lower_slice;
    e->read_options.iterate_upper_bound = &e->upper_slice;
    e->it.reset(db->NewIterator(e->read_options, cf));
  }
  // The sequence number the iterator read at lies between the two checks: the snapshot's.
  if (!at_snapshot()) {
    GiveBack(std::move(e));
    declined_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  (refreshed ? reused_ : made_).fetch_add(1, std::memory_order_relaxed);
  return std::make_unique<Leased>(this, std::move(e), refreshed);
}

std::unique_ptr<IteratorPool::Entry> IteratorPool::Take(uint32_t cf_id) {
  std::lock_guard<std::mutex> l(mu_);
  for (auto i = free_.rbegin(); i != free_.rend(); ++i) {
    if ((*i)->cf_id != cf_id) continue;
    std::unique_ptr<Entry> e = std::move(*i);
    free_.erase(std::next(i).base());
    return e;
  }
  return nullptr;
}

void IteratorPool::GiveBack(std::unique_ptr<Entry> e) {
  if (!e->it->status().ok()) return;  // an I/O error or corruption: not worth keeping
  e->leased_since_sweep = true;
  std::unique_ptr<Entry> surplus;  // freed outside the mutex (it releases a superversion)
  std::lock_guard<std::mutex> l(mu_);
  const uint32_t cf_id = e->cf_id;
  free_.push_back(std::move(e));
  const auto same = [&](const std::unique_ptr<Entry>& f) { return f->cf_id == cf_id; };
  if (static_cast<size_t>(std::count_if(free_.begin(), free_.end(), same)) > kMaxFreePerFamily) {
    const auto oldest = std::find_if(free_.begin(), free_.end(), same);
    surplus = std::move(*oldest);
    free_.erase(oldest);
  }
}

void IteratorPool::DropIdle() {
  std::vector<std::unique_ptr<Entry>> idle;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto keep = free_.begin();
    for (auto& e : free_) {
      if (e->leased_since_sweep) {
        e->leased_since_sweep = false;
        *keep++ = std::move(e);
      } else {
        idle.push_back(std::move(e));
      }
    }
    free_.erase(keep, free_.end());
  }
}

void IteratorPool::Clear() {
  std::vector<std::unique_ptr<Entry>> all;
  std::lock_guard<std::mutex> l(mu_);
  all.swap(free_);
}

IteratorPool::Counts IteratorPool::counts() const {
  return {reused_.load(std::memory_order_relaxed), made_.load(std::memory_order_relaxed),
          declined_.load(std::memory_order_relaxed)};
}

size_t IteratorPool::free_count() const {
  std::lock_guard<std::mutex> l(mu_);
  return free_.size();
}

}  // namespace sluice::internal
