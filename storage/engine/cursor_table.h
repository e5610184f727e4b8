// Server-side SCAN cursors, kept by the engine for the scans of storage/types. Internal header.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace sluice::internal {

// Server-side SCAN cursors: numeric ids mapping to (db, last key returned). Bounded: the
// oldest entries are evicted first, and an unknown id restarts the scan. Thread-safe.
class CursorTable {
 public:
  static constexpr size_t kCapacity = 1 << 16;
  struct Position {
    int db = 0;
    std::string last_key;  // user key; the next page starts strictly after it
    // Empty for SCAN; for an element scan (HSCAN, SSCAN, ...) the collection's raw key and
    // version, and last_key is an element.
    std::string owner;
  };
  uint64_t Add(Position pos);  // returns a fresh id in [1, 2^63)
  std::optional<Position> Find(uint64_t id) const;

 private:
  mutable std::mutex mu_;
  std::unordered_map<uint64_t, Position> by_id_;
  std::deque<uint64_t> order_;  // insertion order, for eviction
  uint64_t next_salt_ = 0;
};

// Random 64-bit numbers from a thread-local PRNG seeded by std::random_device.
uint64_t RandomU64();

}  // namespace sluice::internal
