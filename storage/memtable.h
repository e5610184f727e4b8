// The memtable representation Sluice gives RocksDB: a skiplist over RocksDB's memtable entries
// that compares them itself, in RocksDB's bytewise internal-key order.
//
// Why our own: every write inserts into the memtable and nearly every command reads it first
// (INCR, every limiter take, the keyspace counts' read of a blind SET), and Debian's librocksdb
// is built with assertions on: its InlineSkipList compares keys again at every step of a search
// and an insert, and each comparison goes through three virtual calls and a perf counter
// (measured: ~50% of a SET's instructions were memtable comparisons). This list is compiled
// with Sluice's flags and compares entries inline (first 8 bytes as one integer, then memcmp,
// then the sequence number), so the same search costs a fraction of it. It is the same data
// structure with the same guarantees; the entry format it reads is the one RocksDB documents
// as frozen (MemTable::Add: varint32 internal-key length, user key, 8-byte tag, value).
//
// Contract:
// - Only for column families ordered by RocksDB's BytewiseComparator (all of Sluice's). The
//   factory checks the comparator it is given and falls back to RocksDB's own skiplist for any
//   other order.
// - Readers never lock; inserts publish entries with release stores. Concurrent inserts are
//   supported (allow_concurrent_memtable_write) with compare-and-swap per level.
// - Point lookups read the key out of RocksDB's LookupKey (its first three pointers, a layout
//   unchanged since LevelDB); every lookup checks that layout and aborts with a clear message
//   if a RocksDB build ever changes it.
#pragma once

#include <rocksdb/memtablerep.h>

#include <cstdint>
#include <memory>

namespace sluice::internal {

// A factory for the column families' memtables (ColumnFamilyOptions::memtable_factory).
std::shared_ptr<rocksdb::MemTableRepFactory> NewMemTableFactory();

// How many memtables, process-wide, were made with Sluice's list (not the fallback).
uint64_t SluiceMemTablesCreated();
// How many memtables, process-wide, took an insert through the concurrent path (tests check that
// it ran).
uint64_t MemTablesWithConcurrentInserts();

}  // namespace sluice::internal
