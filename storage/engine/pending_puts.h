// PendingPuts: a unit's last few rewritable Puts, held back from its batch until something
// needs the batch whole.
//
// Why: a unit (or a commit group's members, which share one Txn) that writes one record again
// and again (a hot key's metadata under a pipelined LPUSH/HSET/ZADD/XADD, a stream's tail node
// under XADD, a consumer group's record under XREADGROUP/XACK) would otherwise put every version
// in the batch: one memtable insert, one log record and one flushed entry each, of which only the
// last is ever read. Held here, the next write of the same record replaces it in place, and only
// the last reaches the batch.
//
// Contract: a (column family, key) is in at most one slot, and a slot always holds the unit's
// newest write of its key (any record of it already in the batch is older). Readers of the unit
// look here before the batch (Find); anything that reads the batch directly (an iterator over a
// family, a range deletion, the commit) moves the slots it covers into the batch first. A Delete
// of a key drops its slot (the deletion, appended to the batch, is then the newest record).
// Slots are few (kSlots): a write that finds none free moves the least recently written one into
// the batch. Marks (commit group members): Save copies the slots changed since the last Save,
// Restore puts them back, so a member that rolls back leaves them as the earlier members had
// them (a slot it moved into the batch meanwhile is rolled back with the batch).
//
// Not thread-safe: one unit, one thread.
#pragma once

#include <rocksdb/db.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "indexed_batch.h"

namespace sluice::internal {

class PendingPuts {
 public:
  static constexpr size_t kSlots = 4;
  // A larger value is not held across a mark (MoveLargeToBatch), nor as a rewritable element
  // (Txn::PutRawRewritable): its copies would cost what the saved record does.
  static constexpr size_t kMaxValueBytes = 512;

  struct Slot {
    rocksdb::ColumnFamilyHandle* cf = nullptr;
    std::string key;
    std::string value;
    uint64_t gen = 0;  // the writes counter when the slot last changed
    bool used = false;
  };
  struct Saved {
    Slot slots[kSlots];
    uint64_t gen = 0;
  };

  // The value held for (cf, key), or nullptr. Valid until the next change.
  const std::string* Find(const rocksdb::ColumnFamilyHandle* cf, std::string_view key) const;
  // The slot's value string for (cf, key), to be assigned by the caller: its own slot, a free
  // one, or the least recently written one after moving that into `batch`.
  std::string* Stage(rocksdb::ColumnFamilyHandle* cf, std::string_view key, IndexedBatch& batch);
  // Forgets (cf, key)'s slot, if any (a Delete or a direct Put of the key replaces it).
  void Drop(const rocksdb::ColumnFamilyHandle* cf, std::string_view key);
  // Moves every slot into the batch (the commit, or anything that needs the batch whole).
  void MoveToBatch(IndexedBatch& batch);
  // Moves the slots of `cf` whose keys are in [lower, upper) into the batch: all that an
  // iterator bounded to that range can show. A stream's entries are read with the group's and
  // consumer's records held here, once per commit group instead of once per XREADGROUP.
  void MoveRangeToBatch(IndexedBatch& batch, const rocksdb::ColumnFamilyHandle* cf,
                        std::string_view lower, std::string_view upper);
  // Moves the slots holding more than kMaxValueBytes into the batch (a Put of the keys family
  // stages any size; only small ones stay pending across a commit group member's mark, whose
  // Save copies them).
  void MoveLargeToBatch(IndexedBatch& batch);

  bool empty() const { return used_ == 0; }
  // Changes whenever a slot does: equal counters mean equal contents.
  uint64_t gen() const { return gen_; }
  size_t Bytes() const;

  void Save(Saved* to) const;
  void Restore(const Saved& from);
  void Clear();
  void Trim();  // gives back big strings' memory (after a big unit)

 private:
  Slot* FindSlot(const rocksdb::ColumnFamilyHandle* cf, std::string_view key);
  void Move(Slot& s, IndexedBatch& batch);
  static void CopySlot(const Slot& from, Slot* to);

  Slot slots_[kSlots];
  size_t used_ = 0;
  uint64_t gen_ = 0;
};

}  // namespace sluice::internal
