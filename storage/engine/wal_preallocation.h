// Reserving the write-ahead log's disk space ahead of its writes, so that an fsync of the log
// does not also commit a change of the file's size to the file system's journal.
//
// Appending to a file and fdatasync'ing it makes ext4 (and XFS) write the new size through the
// journal on every sync: 190-210 us per record and sync on the 2-core VM's disk, against
// 135-140 us when the record lands in space the file already has. RocksDB's own preallocation
// (allow_fallocate) keeps the size (FALLOC_FL_KEEP_SIZE), so it does not help the sync; its
// log recycling would, but RocksDB turns it off under every recovery mode but skip-damaged.
// Here each log file is extended, size included, in chunks of kWalPreallocationBytes ahead of
// its writes; the logical end stays where RocksDB's writes end: a clean close cuts the file
// back to it, and after a crash the zeros past it read as preallocated space, which RocksDB's
// log reader and wal_check.cc both accept as the end of the log.
//
// Only files named like RocksDB's write-ahead logs (digits, ".log") are wrapped; every other
// file goes straight to the base file system. When reserving fails (a full disk, a file
// system without fallocate) the file stops reserving and is written as before.
#pragma once

#include <rocksdb/file_system.h>

#include <cstdint>
#include <memory>
#include <string_view>

namespace sluice::internal {

inline constexpr uint64_t kWalPreallocationBytes = uint64_t{1} << 20;

// Whether `path` names a write-ahead log (its last component is digits then ".log").
bool IsWalFileName(std::string_view path);

// `base` with write-ahead log files extended ahead of their writes by `chunk_bytes`.
std::shared_ptr<rocksdb::FileSystem> NewWalPreallocatingFileSystem(
    std::shared_ptr<rocksdb::FileSystem> base, uint64_t chunk_bytes = kWalPreallocationBytes);

}  // namespace sluice::internal
