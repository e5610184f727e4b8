#include "server/core/command_latency.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <mutex>

#include "server/core/command_stats.h"
#include "server/core/per_thread_blocks.h"

namespace sluice::server {

namespace {

// Redis's hdr_init(LATENCY_HISTOGRAM_MIN_VALUE 1, LATENCY_HISTOGRAM_MAX_VALUE 1e9, precision 2):
// unit magnitude 0, 256 sub-buckets (half: 128, magnitude 7), 23 buckets.
constexpr int kHalfMagnitude = 7;
constexpr int64_t kHalfCount = int64_t{1} << kHalfMagnitude;
constexpr int64_t kSubBucketMask = 2 * kHalfCount - 1;
constexpr size_t kCountsLen = (23 + 1) * kHalfCount;  // 3072
constexpr int64_t kMinValue = 1;
constexpr int64_t kMaxValue = 1000000000;

int BucketIndex(int64_t value) {
  const int pow2ceiling = 64 - __builtin_clzll(static_cast<uint64_t>(value | kSubBucketMask));
  return pow2ceiling - (kHalfMagnitude + 1);
}

size_t CountsIndex(int64_t value) {
  const int bucket = BucketIndex(value);
  const int64_t sub = value >> bucket;
  return static_cast<size_t>(((bucket + 1) << kHalfMagnitude) + (sub - kHalfCount));
}

int64_t ValueAtIndex(size_t index) {
  int bucket = static_cast<int>(index >> kHalfMagnitude) - 1;
  int64_t sub = static_cast<int64_t>(index & (kHalfCount - 1)) + kHalfCount;
  if (bucket < 0) {
    sub -= kHalfCount;
    bucket = 0;
  }
  return sub << bucket;
}

int64_t LowestEquivalent(int64_t value) {
  const int bucket = BucketIndex(value);
  return (value >> bucket) << bucket;
}

int64_t HighestEquivalent(int64_t value) {
  const int bucket = BucketIndex(value);
  const int64_t sub = value >> bucket;
  const int adjusted = sub >= 2 * kHalfCount ? bucket + 1 : bucket;
  return LowestEquivalent(value) + (int64_t{1} << adjusted) - 1;
}

struct Counts {
  std::atomic<uint64_t> c[kCountsLen];
};

// One thread's histograms, one per command, allocated at the thread's first call of it.
struct Block {
  std::atomic<std::atomic<uint64_t>*> hist[kMaxCommandStats] = {};
};

using Blocks = PerThreadBlocks<Block>;

// Every histogram array, owned here; guarded by Blocks::Mutex().
std::vector<std::unique_ptr<Counts>>& Arrays() {
  static auto* arrays = new std::vector<std::unique_ptr<Counts>>;  // never destroyed
  return *arrays;
}

// The first call of a command on this thread: its zeroed array (off the fast path).
std::atomic<uint64_t>* NewCounts(std::atomic<std::atomic<uint64_t>*>& slot) {
  std::lock_guard<std::mutex> l(Blocks::Mutex());
  auto counts = std::make_unique<Counts>();
  for (auto& c : counts->c) c.store(0, std::memory_order_relaxed);
  std::atomic<uint64_t>* p = counts->c;
  Arrays().push_back(std::move(counts));
  slot.store(p, std::memory_order_release);
  return p;
}

}  // namespace

void SetLatencyTracking(bool on) { LatencyTrackingFlag().store(on, std::memory_order_relaxed); }

void RecordCommandLatency(size_t command_id, uint64_t usec) {
  if (command_id >= kMaxCommandStats) return;
  // As Redis: duration * 1000 nanoseconds, clamped to the histogram's range.
  const int64_t ns = usec >= static_cast<uint64_t>(kMaxValue / 1000)
                         ? kMaxValue
                         : std::max<int64_t>(static_cast<int64_t>(usec) * 1000, kMinValue);
  std::atomic<std::atomic<uint64_t>*>& slot = Blocks::Mine().hist[command_id];
  std::atomic<uint64_t>* counts = slot.load(std::memory_order_relaxed);
  if (counts == nullptr) counts = NewCounts(slot);
  std::atomic<uint64_t>& c = counts[CountsIndex(ns)];
  c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

std::vector<LatencyCounts> SumCommandLatencies() {
  std::vector<LatencyCounts> out(kMaxCommandStats);
  Blocks::ForEach([&](const Block& block) {
    for (size_t id = 0; id < kMaxCommandStats; ++id) {
      const std::atomic<uint64_t>* counts = block.hist[id].load(std::memory_order_acquire);
      if (counts == nullptr) continue;
      LatencyCounts& sum = out[id];
      if (sum.counts.empty()) sum.counts.assign(kCountsLen, 0);
      for (size_t i = 0; i < kCountsLen; ++i) {
        const uint64_t n = counts[i].load(std::memory_order_relaxed);
        sum.counts[i] += n;
        sum.total += n;
      }
    }
  });
  return out;
}

void ResetCommandLatencies() {
  std::lock_guard<std::mutex> l(Blocks::Mutex());
  for (const auto& counts : Arrays()) {
    for (auto& c : counts->c) c.store(0, std::memory_order_relaxed);
  }
}

std::vector<std::pair<int64_t, uint64_t>> LatencyBuckets(const LatencyCounts& h) {
  // hdr's logarithmic iterator from 1024 ns, base 2: at each level L it has summed every
  // counter up to L's, and reports highest_equivalent(L) / 1000 when the sum grew.
  std::vector<std::pair<int64_t, uint64_t>> out;
  uint64_t cumulative = 0;
  size_t next = 0;
  for (int64_t level = 1024; cumulative < h.total && next < kCountsLen; level *= 2) {
    const size_t upto = std::min(CountsIndex(std::min(level, kMaxValue * 2)), kCountsLen - 1);
    const uint64_t before = cumulative;
    for (; next <= upto; ++next) cumulative += h.counts[next];
    if (cumulative > before) out.emplace_back(HighestEquivalent(level) / 1000, cumulative);
  }
  return out;
}

int64_t LatencyAtPercentile(const LatencyCounts& h, double percentile) {
  const double p = percentile < 100.0 ? percentile : 100.0;
  auto wanted = static_cast<int64_t>((p / 100) * static_cast<double>(h.total) + 0.5);
  wanted = std::max<int64_t>(wanted, 1);
  int64_t cumulative = 0;
  for (size_t i = 0; i < h.counts.size(); ++i) {
    cumulative += static_cast<int64_t>(h.counts[i]);
    if (cumulative >= wanted) {
      const int64_t value = ValueAtIndex(i);
      return percentile == 0.0 ? LowestEquivalent(value) : HighestEquivalent(value);
    }
  }
  return 0;
}

std::string FormatLatencyPercentiles(const LatencyCounts& h,
                                     const std::vector<double>& percentiles) {
  std::string out;
  for (size_t j = 0; j < percentiles.size(); ++j) {
    // Redis: "%f" with trailing zeros (and a bare point) trimmed, then "%.3f" microseconds.
    char name[128];
    std::snprintf(name, sizeof name, "%f", percentiles[j]);
    std::string trimmed(name);
    if (trimmed.find('.') != std::string::npos) {
      while (trimmed.back() == '0') trimmed.pop_back();
      if (trimmed.back() == '.') trimmed.pop_back();
    }
    char value[64];
    std::snprintf(value, sizeof value, "%.3f",
                  static_cast<double>(LatencyAtPercentile(h, percentiles[j])) / 1000.0);
    if (j > 0) out += ',';
    out += "p" + trimmed + "=" + value;
  }
  return out;
}

}  // namespace sluice::server
