// Striped per-key locks. A key's stripe is XXH3_64bits(encoded key) mod kStripes, so two
// different keys may share a stripe (harmless: only more serialization). Multi-key operations
// lock their distinct stripes in ascending order, which makes deadlock impossible.
// Thread-safe.
#pragma once

#include <cstddef>
#include <mutex>
#include <string_view>
#include <vector>

namespace sluice::internal {

class LockPool {
 public:
  static constexpr size_t kStripes = 4096;

  static size_t StripeOf(std::string_view raw_key);
  std::mutex& ForKey(std::string_view raw_key) { return mutexes_[StripeOf(raw_key)]; }

  // Holds the stripes of a set of keys (or every stripe) until destroyed.
  class MultiGuard {
   public:
    MultiGuard(LockPool& pool, const std::vector<std::string_view>& raw_keys);
    MultiGuard(LockPool& pool, const std::vector<std::string>& raw_keys);
    static MultiGuard All(LockPool& pool);  // every stripe: for FLUSHDB/FLUSHALL
    ~MultiGuard();
    MultiGuard(MultiGuard&& other) noexcept;
    MultiGuard(const MultiGuard&) = delete;
    MultiGuard& operator=(const MultiGuard&) = delete;
    MultiGuard& operator=(MultiGuard&&) = delete;

   private:
    MultiGuard(LockPool& pool, std::vector<size_t> stripes);
    LockPool* pool_;
    std::vector<size_t> stripes_;  // sorted, distinct, all locked
  };

 private:
  std::mutex mutexes_[kStripes];
};

}  // namespace sluice::internal
