#include "sluice/encoding_limits.h"

#include <atomic>

namespace sluice {

namespace {
const EncodingLimits kDefaults;
std::atomic<int64_t> g_hash_entries{kDefaults.hash_max_listpack_entries};
std::atomic<int64_t> g_hash_value{kDefaults.hash_max_listpack_value};
std::atomic<int64_t> g_set_entries{kDefaults.set_max_intset_entries};
std::atomic<int64_t> g_zset_entries{kDefaults.zset_max_listpack_entries};
std::atomic<int64_t> g_zset_value{kDefaults.zset_max_listpack_value};
}  // namespace

void SetEncodingLimits(const EncodingLimits& limits) {
  g_hash_entries.store(limits.hash_max_listpack_entries, std::memory_order_relaxed);
  g_hash_value.store(limits.hash_max_listpack_value, std::memory_order_relaxed);
  g_set_entries.store(limits.set_max_intset_entries, std::memory_order_relaxed);
  g_zset_entries.store(limits.zset_max_listpack_entries, std::memory_order_relaxed);
  g_zset_value.store(limits.zset_max_listpack_value, std::memory_order_relaxed);
}

EncodingLimits GetEncodingLimits() {
  EncodingLimits limits;
  limits.hash_max_listpack_entries = g_hash_entries.load(std::memory_order_relaxed);
  limits.hash_max_listpack_value = g_hash_value.load(std::memory_order_relaxed);
  limits.set_max_intset_entries = g_set_entries.load(std::memory_order_relaxed);
  limits.zset_max_listpack_entries = g_zset_entries.load(std::memory_order_relaxed);
  limits.zset_max_listpack_value = g_zset_value.load(std::memory_order_relaxed);
  return limits;
}

}  // namespace sluice
