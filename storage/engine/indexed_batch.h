// IndexedBatch: a unit's rocksdb::WriteBatch that reads its own writes, the job RocksDB's
// WriteBatchWithIndex did for Txn.
//
// Why our own: WriteBatchWithIndex indexes every record in a skiplist whose comparator decodes
// both entries and calls the column family's comparator through virtual calls, and Debian's
// librocksdb runs it with assertions on; a commit group's batch holds a whole I/O round's writes,
// so each Put searched a growing skiplist (measured: ~3,800 instructions per SET, 28% of it).
// Here the index is a hash table on (column family, key) pointing at the latest record's bytes in
// the batch itself: a Put is an append and one hash probe, a read of a staged key one probe. Key
// order is only needed by iterators, which sort the few staged keys of their range when they are
// made (DeltaIterator merges them over the database's iterator).
//
// Semantics (those Txn relied on): the latest record of a key wins (a Put or a Delete); records
// added through batch() (range deletions, the count merges) are written but not indexed, so they
// are never read back; savepoints truncate the batch and rebuild the index from what remains.
// Views returned (Find's value, a DeltaIterator's keys and values) point into the batch and stay
// valid until the next write or Clear.
//
// Not thread-safe: one unit, one thread.
#pragma once

#include <rocksdb/iterator.h>
#include <rocksdb/write_batch.h>

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace sluice::internal {

class IndexedBatch {
 public:
  enum class Staged { kNone, kPut, kDeleted };

  IndexedBatch();
  IndexedBatch(const IndexedBatch&) = delete;
  IndexedBatch& operator=(const IndexedBatch&) = delete;

  void Put(rocksdb::ColumnFamilyHandle* cf, std::string_view key, std::string_view value);
  void Delete(rocksdb::ColumnFamilyHandle* cf, std::string_view key);
  // RocksDB's SingleDelete, for a key written at most once since it was last absent (Txn::
  // EraseOnce has the contract); read back here as a Delete.
  void SingleDelete(rocksdb::ColumnFamilyHandle* cf, std::string_view key);
  // The batch itself: what is added here directly is written but never read back.
  rocksdb::WriteBatch* batch() { return &batch_; }
  uint32_t Count() const { return batch_.Count(); }
  // Records Put/Delete added outside the default (keys) family since the last Clear: the
  // element writes the write path warms the memtables for (write_prefetch.h). A hint: a
  // rollback or trim does not lower it.
  uint32_t NonKeyRecords() const { return non_key_records_; }
  size_t DataSize() const { return batch_.GetDataSize(); }

  // The latest indexed record of key in column family cf_id; *value views a kPut's value.
  Staged Find(uint32_t cf_id, std::string_view key, std::string_view* value) const;

  // A staged record, for iterating in key order.
  struct Delta {
    std::string_view key;
    std::string_view value;
    bool deleted;
  };
  // The latest record of every indexed key of cf_id in [lower, upper), sorted by key
  // (bytewise). An empty `upper` means no upper bound.
  void Sorted(uint32_t cf_id, std::string_view lower, std::string_view upper,
              std::vector<Delta>* out) const;
  // An iterator over `base` (which must iterate cf_id's stored keys) with the records of cf_id in
  // [lower, upper) merged over it: a staged Put shows its value, a staged Delete hides the key.
  // Takes ownership of base. The batch must not change while the iterator is used.
  std::unique_ptr<rocksdb::Iterator> NewIteratorWithBase(uint32_t cf_id, rocksdb::Iterator* base,
                                                         std::string_view lower,
                                                         std::string_view upper) const;

  void Clear();
  // Frees the index and the batch's memory when they grew past keep_bytes (after a big unit).
  void Trim(size_t keep_bytes);

  void SetSavePoint() { batch_.SetSavePoint(); }
  // Drops what was added since the last savepoint (and the savepoint).
  rocksdb::Status RollbackToSavePoint();
  rocksdb::Status PopSavePoint() { return batch_.PopSavePoint(); }

 private:
  struct Slot {
    uint64_t hash = 0;
    uint32_t gen = 0;  // the slot is used when gen == gen_
    uint32_t cf = 0;
    uint8_t deleted = 0;
    size_t key_off = 0;  // into batch_.Data()
    size_t key_len = 0;
    size_t value_off = 0;
    size_t value_len = 0;
  };

  // Indexes the record just appended for key (its value the last value_len bytes, if a Put).
  void IndexLast(uint32_t cf, std::string_view key, bool deleted, size_t value_len);
  void Index(uint32_t cf, size_t key_off, size_t key_len, bool deleted, size_t value_off,
             size_t value_len);
  size_t Probe(uint32_t cf, std::string_view key, uint64_t hash) const;
  void Grow();
  void ClearIndex();
  void Rebuild();
  std::string_view KeyOf(const Slot& s) const {
    return std::string_view(batch_.Data().data() + s.key_off, s.key_len);
  }

  rocksdb::WriteBatch batch_;
  std::vector<Slot> slots_;  // open addressing, linear probing; size a power of two
  size_t used_ = 0;
  // The used slots in (cf, key) order, kept for Sorted: each call merges in the slots indexed
  // since the one before (unordered_), so that a commit group's iterators do not sort the
  // whole batch each (a group of 1,024 ZPOPMAX on one key sorted ~500k keys). A slot's key
  // never changes while it is used; Grow (slots move) and ClearIndex start both over.
  mutable std::vector<uint32_t> ordered_;
  mutable std::vector<uint32_t> unordered_;
  mutable std::vector<uint32_t> merged_;  // Sorted's output buffer, swapped with ordered_
  uint32_t non_key_records_ = 0;
  uint32_t gen_ = 1;
};

}  // namespace sluice::internal
