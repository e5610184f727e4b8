// StatCounter: a statistic that many threads add to (commands processed, bytes in and out,
// limiter and script calls) and INFO reads. One std::atomic shared by every I/O thread makes
// each increment a cache-line transfer between cores once several threads count at once, and
// its line is then contended for by whatever else sits on it; here each thread adds to a cache
// line of its own (one of kShards, picked once per thread) and a read sums them. Relaxed:
// statistics, not synchronisation. The subset of std::atomic's interface the counters use.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace sluice::server {

class StatCounter {
 public:
  static constexpr size_t kShards = 16;

  void fetch_add(int64_t n, std::memory_order order = std::memory_order_relaxed) {
    shards_[ThreadShard()].value.fetch_add(n, order);
  }
  int64_t load(std::memory_order order = std::memory_order_relaxed) const {
    int64_t sum = 0;
    for (const Shard& s : shards_) sum += s.value.load(order);
    return sum;
  }
  // CONFIG RESETSTAT: not atomic with respect to concurrent adds (neither is Redis's).
  void store(int64_t v, std::memory_order order = std::memory_order_relaxed) {
    for (Shard& s : shards_) s.value.store(0, order);
    shards_[0].value.store(v, order);
  }

 private:
  struct alignas(64) Shard {
    std::atomic<int64_t> value{0};
  };
  // The calling thread's shard: threads take them in turn as they first count.
  static size_t ThreadShard() {
    static std::atomic<size_t> next{0};
    thread_local const size_t shard = next.fetch_add(1, std::memory_order_relaxed) % kShards;
    return shard;
  }
  std::array<Shard, kShards> shards_{};
};

}  // namespace sluice::server
