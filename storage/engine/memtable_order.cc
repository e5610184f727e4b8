// The memtable's key order (memtable_order.h has the design and the contract).
#include "memtable_order.h"

#include <pthread.h>

#include <algorithm>
#include <deque>
#include <span>
#include <thread>
#include <utility>

namespace sluice::internal::memtable_nodes {
namespace {

bool PrefixLess(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1) {
  return a0 != b0 ? a0 < b0 : a1 < b1;
}

// Fetches the key bytes of an entry a merge will compare in full soon: one whose integers tie
// with the entry's before it (keys sharing their first 16 bytes come in groups: one collection's
// elements).
void PrefetchIfTied(std::span<const OrderEntry> run, size_t i) {
  if (i < run.size() && run[i].p0 == run[i - 1].p0 && run[i].p1 == run[i - 1].p1) {
    __builtin_prefetch(run[i].entry);
  }
}

// The end of v's block from `from` whose entries are all before `pivot`, given that v[from]
// is: the first index past `from` whose entry is not (exponential steps, then a binary search
// between the last two), so a block of b entries costs ~2 log2(b) comparisons.
size_t BlockEnd(std::span<const OrderEntry> v, size_t from, const OrderEntry& pivot) {
  size_t last_before = from;
  size_t probe = from + 1;
  for (size_t step = 1; probe < v.size() && Less(v[probe], pivot); probe = from + step) {
    last_before = probe;
    step *= 2;
  }
  const auto rest = v.subspan(last_before + 1, std::min(probe, v.size()) - last_before - 1);
  return last_before + 1 +
         static_cast<size_t>(
             std::partition_point(rest.begin(), rest.end(),
                                  [&pivot](const OrderEntry& e) { return Less(e, pivot); }) -
             rest.begin());
}

// Appends the merge of x and y (each sorted, no key in both) to *out; false when *cancel was set
// first. Ties are compared in full, a cache miss each on the key bytes, so those a few steps
// ahead are fetched while the merge goes on. After kGallopAfter entries in a row from one side,
// the rest of that side's block before the other's head is found by search and copied whole
// (as timsort gallops): keys written in order (a stream's entries, a list's new positions, a
// counter in a key name) come in long blocks that a merge no longer compares entry by entry;
// in keys that interleave, a block rarely gets that long, and a search costs a few comparisons.
bool MergeInto(std::span<const OrderEntry> x, std::span<const OrderEntry> y,
               std::vector<OrderEntry>* out, const std::atomic<bool>* cancel = nullptr) {
  constexpr size_t kCancelCheck = 4096;
  constexpr size_t kAhead = 8;
  constexpr int kGallopAfter = 16;
  const auto append = [out](std::span<const OrderEntry> v, size_t from, size_t to) {
    out->insert(out->end(), v.begin() + static_cast<ptrdiff_t>(from),
                v.begin() + static_cast<ptrdiff_t>(to));
  };
  // Takes v's head at *at, the lesser of the two; after kGallopAfter in a row, v's whole block
  // before `other` (the other run's head).
  const auto take = [&](std::span<const OrderEntry> v, size_t* at, int* wins, int* other_wins,
                        const OrderEntry& other) {
    *other_wins = 0;
    if (++*wins >= kGallopAfter) {
      const size_t end = BlockEnd(v, *at, other);
      append(v, *at, end);
      *at = end;
      *wins = 0;
      return;
    }
    out->push_back(v[(*at)++]);
    PrefetchIfTied(v, *at + kAhead);
  };
  size_t i = 0, j = 0;
  size_t next_check = out->size();
  int x_wins = 0, y_wins = 0;
  while (i < x.size() && j < y.size()) {
    if (cancel != nullptr && out->size() >= next_check) {
      if (cancel->load(std::memory_order_relaxed)) return false;
      next_check = out->size() + kCancelCheck;
    }
    if (Less(y[j], x[i])) {
      take(y, &j, &y_wins, &x_wins, x[i]);
    } else {
      take(x, &i, &x_wins, &y_wins, y[j]);
    }
  }
  append(x, i, x.size());
  append(y, j, y.size());
  return true;
}

// One sorted run of a and b (no key in both); nullptr when *cancel was set first.
std::shared_ptr<const Run> Merge(const Run& a, const Run& b,
                                 const std::atomic<bool>* cancel = nullptr) {
  std::vector<OrderEntry> out;
  out.reserve(a.size() + b.size());
  if (!MergeInto(a.entries, b.entries, &out, cancel)) return nullptr;
  return std::make_shared<const Run>(std::move(out));
}

std::atomic<uint64_t> large_merges_in_process{0};

// One thread for the process that runs KeyOrder's large merges, in the order they were asked
// for. Never destroyed: it lives as long as the process, as memtables may.
class RunMerger {
 public:
  static RunMerger& Instance() {
    static RunMerger* const merger = new RunMerger();
    return *merger;
  }
  void Enqueue(std::shared_ptr<KeyOrder> order) {
    std::lock_guard<std::mutex> l(mu_);
    queue_.push_back(std::move(order));
    ready_.notify_one();
  }

 private:
  RunMerger() {
    std::thread t([this] { Loop(); });
    pthread_setname_np(t.native_handle(), "sluice-merge");
    t.detach();
  }
  [[noreturn]] void Loop() {
    for (;;) {
      std::shared_ptr<KeyOrder> order;
      {
        std::unique_lock<std::mutex> l(mu_);
        ready_.wait(l, [this] { return !queue_.empty(); });
        order = std::move(queue_.front());
        queue_.pop_front();
      }
      order->MergeLarge();
    }
  }

  std::mutex mu_;
  std::condition_variable ready_;
  std::deque<std::shared_ptr<KeyOrder>> queue_;  // guarded by mu_
};

}  // namespace

Run::Run(std::vector<OrderEntry> sorted) : entries(std::move(sorted)) {
  fence.reserve(entries.size() / kFenceStride + 1);
  for (size_t i = 0; i < entries.size(); i += kFenceStride) {
    fence.push_back(Prefix{entries[i].p0, entries[i].p1});
  }
}

Run::Span Run::FenceSpan(const SearchKey& k) const {
  // Fence entry j is entries[j * kFenceStride]. Entries up to the last fence entry whose integers
  // are below k's are before k; from the first fence entry whose integers are above k's on, none
  // is. Only the entries between are compared in full.
  const auto below = std::partition_point(fence.begin(), fence.end(), [&k](const Prefix& f) {
    return PrefixLess(f.p0, f.p1, k.p0, k.p1);
  });
  const auto not_above = std::partition_point(
      below, fence.end(), [&k](const Prefix& f) { return !PrefixLess(k.p0, k.p1, f.p0, f.p1); });
  const size_t first_block = below == fence.begin() ? 0 : (below - fence.begin()) - 1;
  const Span span{first_block * kFenceStride,
                  std::min(entries.size(), (not_above - fence.begin()) * kFenceStride)};
  if (span.hi - span.lo <= 2 * kFenceStride) {
    const char* line = reinterpret_cast<const char*>(entries.data() + span.lo);
    const char* end = reinterpret_cast<const char*>(entries.data() + span.hi);
    for (; line < end; line += 64) __builtin_prefetch(line);
  }
  return span;
}

void Run::PrefetchTies(Span span, const SearchKey& k) const {
  if (span.hi - span.lo > 2 * kFenceStride) return;
  for (size_t i = span.lo; i < span.hi; ++i) {
    if (entries[i].p0 == k.p0 && entries[i].p1 == k.p1) __builtin_prefetch(entries[i].entry);
  }
}

size_t Run::Search(Span span, const SearchKey& k) const {
  const auto before = [](const OrderEntry& e, const SearchKey& key) { return Compare(e, key) < 0; };
  return static_cast<size_t>(std::lower_bound(entries.begin() + static_cast<ptrdiff_t>(span.lo),
                                              entries.begin() + static_cast<ptrdiff_t>(span.hi), k,
                                              before) -
                             entries.begin());
}

KeyOrder::KeyOrder() {
  tail_.reserve(kTailEntries);
  CountBytes();
}

void KeyOrder::Add(KeyNode* node, const Key& key, const char* entry) {
  const SearchKey k = SearchKeyOf(key);
  std::lock_guard<std::mutex> l(mu_);
  tail_.push_back(OrderEntry{k.p0, k.p1, entry, node});
  ++keys_added_;
  tail_copy_.reset();
  if (tail_.size() >= kTailEntries) SealTail();
}

OrderSnapshot KeyOrder::Snapshot() {
  std::lock_guard<std::mutex> l(mu_);
  OrderSnapshot s;
  SnapshotLocked(&s);
  return s;
}

bool KeyOrder::SnapshotIfNewer(const OrderSnapshot& seen, OrderSnapshot* out) {
  std::lock_guard<std::mutex> l(mu_);
  if (keys_added_ == seen.keys) return false;
  SnapshotLocked(out);
  return true;
}

void KeyOrder::SnapshotLocked(OrderSnapshot* s) {
  s->keys = keys_added_;
  s->runs.clear();
  s->runs.reserve(runs_.size() + 1);
  s->runs.assign(runs_.begin(), runs_.end());
  if (!tail_.empty()) {
    if (tail_copy_ == nullptr) {
      SortTail();
      tail_copy_ = std::make_shared<const Run>(tail_);  // a copy: tail_ grows on
    }
    s->runs.push_back(tail_copy_);
  }
}

// Keys written in order (a stream's entries with a node key now and then, a list's new
// positions, ascending for RPUSH and descending for LPUSH) leave the tail in a few monotonic
// stretches: those are merged (a descending one reversed first; MergeInto gallops through them),
// where std::sort would compare ~n log2 n times, each a full comparison when the keys share their
// first 16 bytes (one collection's elements). Keys in no order show more than kMaxStretches
// stretches within their first few entries, and are sorted as before.
void KeyOrder::SortTail() {
  constexpr size_t kMaxStretches = 8;
  size_t starts[kMaxStretches] = {0};
  size_t stretches = 1;
  const size_t n = tail_.size();
  for (size_t at = tail_sorted_; at < n && stretches <= kMaxStretches;) {
    size_t end = at + 1;
    if (end < n && Less(tail_[end], tail_[at])) {
      while (end + 1 < n && Less(tail_[end + 1], tail_[end])) ++end;
      std::reverse(tail_.begin() + static_cast<ptrdiff_t>(at),
                   tail_.begin() + static_cast<ptrdiff_t>(++end));
    } else {
      while (end < n && !Less(tail_[end], tail_[end - 1])) ++end;
    }
    // A stretch that goes on from the one before it joins it.
    if (at > 0 && Less(tail_[at], tail_[at - 1])) {
      if (stretches < kMaxStretches) starts[stretches] = at;
      ++stretches;
    }
    at = end;
  }
  if (stretches <= kMaxStretches) {
    MergeStretches(std::span<const size_t>(starts, stretches));
  } else {
    const auto unsorted = tail_.begin() + static_cast<ptrdiff_t>(tail_sorted_);
    std::sort(unsorted, tail_.end(), Less);
    std::inplace_merge(tail_.begin(), unsorted, tail_.end(), Less);
  }
  tail_sorted_ = n;
}

void KeyOrder::MergeStretches(std::span<const size_t> starts) {
  if (starts.size() < 2) return;
  const std::span<const OrderEntry> tail(tail_);
  std::vector<OrderEntry> merged;
  std::vector<OrderEntry> next;
  merged.reserve(tail_.capacity());
  next.reserve(tail_.capacity());
  merged.assign(tail.begin(), tail.begin() + static_cast<ptrdiff_t>(starts[1]));
  for (size_t s = 1; s < starts.size(); ++s) {
    const size_t end = s + 1 < starts.size() ? starts[s + 1] : tail.size();
    next.clear();
    MergeInto(merged, tail.subspan(starts[s], end - starts[s]), &next);
    merged.swap(next);
  }
  tail_.swap(merged);
}

// The writer's merges: the newest two runs while the older is at most twice the newer and both
// fit in kInlineMergeEntries; a larger merge due is left to the merge thread.
void KeyOrder::SealTail() {
  SortTail();
  runs_.push_back(std::make_shared<const Run>(std::move(tail_)));
  tail_ = std::vector<OrderEntry>();
  tail_.reserve(kTailEntries);
  tail_sorted_ = 0;
  while (runs_.size() >= 2) {
    const Run& older = *runs_[runs_.size() - 2];
    const Run& newer = *runs_.back();
    if (older.size() > 2 * newer.size() || older.size() + newer.size() > kInlineMergeEntries ||
        InLargeMerge(&older) || InLargeMerge(&newer)) {
      break;
    }
    std::shared_ptr<const Run> merged = Merge(older, newer);
    runs_.pop_back();
    runs_.back() = std::move(merged);
  }
  CountBytes();
  if (!queued_ && !closed_ && DueLargeMerge() < runs_.size()) {
    queued_ = true;
    RunMerger::Instance().Enqueue(shared_from_this());
  }
}

size_t KeyOrder::DueLargeMerge() const {
  for (size_t i = 0; i + 1 < runs_.size(); ++i) {
    const size_t older = runs_[i]->size();
    const size_t newer = runs_[i + 1]->size();
    if (older <= 2 * newer && older + newer > kInlineMergeEntries) return i;
  }
  return runs_.size();
}

bool KeyOrder::InLargeMerge(const Run* run) const {
  return run == merging_[0] || run == merging_[1];
}

void KeyOrder::MergeLarge() {
  std::unique_lock<std::mutex> l(mu_);
  while (!closed_) {
    const size_t i = DueLargeMerge();
    if (i == runs_.size()) break;
    const std::shared_ptr<const Run> older = runs_[i];
    const std::shared_ptr<const Run> newer = runs_[i + 1];
    merging_[0] = older.get();
    merging_[1] = newer.get();
    l.unlock();
    std::shared_ptr<const Run> merged = Merge(*older, *newer, &cancel_);
    l.lock();
    merging_[0] = merging_[1] = nullptr;
    merge_done_.notify_all();
    if (merged == nullptr) break;  // closed
    const auto at = std::find(runs_.begin(), runs_.end(), older);
    *at = std::move(merged);
    runs_.erase(at + 1);
    CountBytes();
    large_merges_.fetch_add(1, std::memory_order_relaxed);
    large_merges_in_process.fetch_add(1, std::memory_order_relaxed);
  }
  queued_ = false;
}

uint64_t KeyOrder::LargeMergesInProcess() {
  return large_merges_in_process.load(std::memory_order_relaxed);
}

void KeyOrder::Close() {
  std::unique_lock<std::mutex> l(mu_);
  closed_ = true;
  cancel_.store(true, std::memory_order_relaxed);
  merge_done_.wait(l, [this] { return merging_[0] == nullptr; });
}

// The tail's bytes count at its reserved capacity (constant), so only a seal or a merge changes
// the total.
void KeyOrder::CountBytes() {
  size_t entries = tail_.capacity();
  size_t fence = 0;
  for (const auto& run : runs_) {
    entries += run->size();
    fence += run->fence.size();
  }
  bytes_.store(entries * sizeof(OrderEntry) + fence * sizeof(Run::Prefix),
               std::memory_order_relaxed);
}

// ---- OrderCursor

OrderCursor::OrderCursor(OrderSnapshot snapshot) : snapshot_(std::move(snapshot)) {
  runs_.reserve(snapshot_.runs.size());
  for (const auto& run : snapshot_.runs) {
    if (run->size() != 0) runs_.push_back(run.get());
  }
  pos_.assign(runs_.size(), 0);
}

bool OrderCursor::HeadLess(const Head& a, const Head& b) {
  if (a.p0 != b.p0) return a.p0 < b.p0;
  if (a.p1 != b.p1) return a.p1 < b.p1;
  return CompareUser(a.user, a.user_size, b.user, b.user_size) < 0;
}

OrderCursor::Head OrderCursor::HeadOf(uint32_t run) const {
  const OrderEntry& e = runs_[run]->entries[pos_[run]];
  const Key key = KeyOfEntry(e.entry);
  return Head{e.p0, e.p1, key.user, key.user_size, run};
}

KeyNode* OrderCursor::Least() {
  ahead_.clear();
  for (uint32_t i = 0; i < runs_.size(); ++i) {
    if (pos_[i] != runs_[i]->size()) ahead_.push_back(HeadOf(i));
  }
  std::sort(ahead_.begin(), ahead_.end(), [](const Head& a, const Head& b) {
    return HeadLess(b, a);  // greatest first: the least is taken from the back
  });
  ahead_valid_ = true;
  if (ahead_.empty()) return nullptr;
  at_ = ahead_.back().run;
  return runs_[at_]->entries[pos_[at_]].node;
}

KeyNode* OrderCursor::Greatest() {
  ahead_valid_ = false;
  const OrderEntry* best = nullptr;
  for (size_t i = 0; i < runs_.size(); ++i) {
    if (pos_[i] == 0) continue;
    const OrderEntry& e = runs_[i]->entries[pos_[i] - 1];
    if (best == nullptr || Less(*best, e)) {
      best = &e;
      at_ = i;
    }
  }
  if (best == nullptr) return nullptr;
  --pos_[at_];
  return best->node;
}

void OrderCursor::LowerBounds(const SearchKey& k) {
  Run::Span spans[kRunsSearchedTogether];
  for (size_t first = 0; first < runs_.size(); first += kRunsSearchedTogether) {
    const size_t n = std::min(kRunsSearchedTogether, runs_.size() - first);
    for (size_t i = 0; i < n; ++i) spans[i] = runs_[first + i]->FenceSpan(k);
    for (size_t i = 0; i < n; ++i) runs_[first + i]->PrefetchTies(spans[i], k);
    for (size_t i = 0; i < n; ++i) pos_[first + i] = runs_[first + i]->Search(spans[i], k);
  }
}

KeyNode* OrderCursor::SeekToFirst() {
  std::fill(pos_.begin(), pos_.end(), 0);
  return Least();
}

KeyNode* OrderCursor::SeekToLast() {
  for (size_t i = 0; i < runs_.size(); ++i) pos_[i] = runs_[i]->size();
  return Greatest();
}

KeyNode* OrderCursor::SeekAtOrAfter(const SearchKey& k) {
  LowerBounds(k);
  return Least();
}

KeyNode* OrderCursor::SeekBefore(const SearchKey& k) {
  LowerBounds(k);
  return Greatest();
}

KeyNode* OrderCursor::Next() {
  ++pos_[at_];
  if (!ahead_valid_ || ahead_.empty() || ahead_.back().run != at_) return Least();
  ahead_.pop_back();
  if (pos_[at_] != runs_[at_]->size()) {
    // Its next entry goes where it belongs among the others (greatest first).
    const Head moved = HeadOf(static_cast<uint32_t>(at_));
    auto it = std::upper_bound(ahead_.begin(), ahead_.end(), moved,
                               [](const Head& m, const Head& h) { return HeadLess(h, m); });
    ahead_.insert(it, moved);
  }
  if (ahead_.empty()) return nullptr;
  at_ = ahead_.back().run;
  return runs_[at_]->entries[pos_[at_]].node;
}

KeyNode* OrderCursor::Prev() { return Greatest(); }

void OrderCursor::PrefetchAhead() const {
  if (runs_.empty()) return;
  const std::vector<OrderEntry>& run = runs_[at_]->entries;
  const size_t p = pos_[at_];
  if (p + 1 < run.size()) __builtin_prefetch(run[p + 1].entry);
  if (p + 2 < run.size()) __builtin_prefetch(run[p + 2].node->Newest());
  if (p + 4 < run.size()) __builtin_prefetch(run[p + 4].node);
}

uint64_t OrderCursor::CountBefore(const SearchKey& k) const {
  uint64_t count = 0;
  for (const Run* run : runs_) count += run->LowerBound(k);
  return count;
}

}  // namespace sluice::internal::memtable_nodes
