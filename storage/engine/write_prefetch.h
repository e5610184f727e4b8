// Warming the element memtables' hash buckets for a batch about to be written.
//
// A collection write inserts element sub-keys nobody read first (LPUSH's new positions, ZADD's
// new [score][member] keys, the deletion markers of replaced ones): each insert's search of the
// memtable's hash table was two or three dependent cache misses (`HashedList::Add`, 29-31% of
// the server's samples under LPUSH on one hot key at pipeline 16). Warming the batch's element
// keys sixteen at a time before RocksDB inserts them lets those misses overlap.
//
// Thread-safety: call from the writing thread, before the write; reads only what the
// newest memtables allow concurrently (memtable.h, NewestMemTable).
#pragma once

#include <rocksdb/write_batch.h>

#include <cstdint>

namespace sluice {
class Store;
}

namespace sluice::internal {

class NewestMemTable;

// The element column families' IDs and their newest memtables, as the store opened them.
struct ElementWriteTargets {
  static constexpr int kMax = 8;
  int n = 0;
  uint32_t cf_ids[kMax] = {};
  const NewestMemTable* memtables[kMax] = {};
};

// Prefetches the memtable entries of the batch's element writes (puts, deletes, merges in the
// element column families); does nothing for a batch of fewer than two or of more than
// kMaxPrefetchedEntries of them (their lines would not stay cached until inserted).
void PrefetchElementWrites(const rocksdb::WriteBatch& batch, const ElementWriteTargets& targets);

inline constexpr int kMaxPrefetchedEntries = 2048;

// How many element keys the calling thread handed to prefetchers (tests: proof the batch's
// element writes, and only those, were warmed).
uint64_t ElementWritesPrefetchedOnThisThread();

}  // namespace sluice::internal
