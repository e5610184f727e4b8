// ReadAhead: the stored records of a run of keys that a unit reads one after another, each once
// (a list's pops from one end), read with one iterator step each instead of one point read each.
//
// Why: a point read of a record that a flush moved into a table file walks every level's filter,
// index and data block (~1.6 us of CPU on the 2-core VM, four times a memtable hit), and a
// pipelined LPOP on a list whose elements were flushed paid that per pop (8-9 us of server CPU
// per call). One seek and a step per record reads the same blocks once for many pops.
//
// Contract: once filled, it holds what was stored for every key of the run from first() to
// last() (inclusive, in the run's direction) that shares its prefix. Txn keeps it true: it fills
// it only while the unit holds the lock of the key that owns the run (nobody else writes those
// records then), serves it only after the unit's own staged writes (pending and batch), and
// clears it when the unit commits or rolls back (its writes become stored, its locks go) and
// when it empties a database. Not thread-safe: one unit.
#pragma once

#include <rocksdb/iterator.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::internal {

class ReadAhead {
 public:
  static constexpr size_t kMaxEntries = 32;
  static constexpr size_t kMaxBytes = 64 * 1024;  // values; the entry that crosses it is kept

  // Reads up to kMaxEntries records from `it`, which is positioned at the run's first key and
  // steps (Next, or Prev when `descending`) only over keys that start with `prefix`. On an
  // iterator error it holds nothing.
  void Fill(uint32_t cf_id, std::string_view prefix, bool descending, rocksdb::Iterator* it);
  // True when key (of column family cf_id) is covered; then *found says whether a record was
  // stored and *value holds it. False: not covered, read it elsewhere.
  bool Serve(uint32_t cf_id, std::string_view key, std::string* value, bool* found);
  void Clear() { n_ = 0; }
  size_t size() const { return n_; }
  // Gives back the memory of big values (after a big unit).
  void Trim();

 private:
  // Whether a comes before b in the run's direction.
  bool Before(std::string_view a, std::string_view b) const { return descending_ ? a > b : a < b; }

  struct Entry {
    std::string key;
    std::string value;
  };
  std::vector<Entry> entries_;  // [0, n_) in use, in the run's order; strings reused
  size_t n_ = 0;
  size_t next_ = 0;  // where the next Serve starts looking (runs read in order)
  std::string prefix_;
  uint32_t cf_id_ = 0;
  bool descending_ = false;
};

}  // namespace sluice::internal
