// RocksDB's info log ("LOG" in the data directory), written so that a full disk cannot crash the
// process. RocksDB's own file logger keeps using its file after a failed write, which trips an
// assertion in Debian's librocksdb (writable_file_writer.h, sync_without_flush_called_): the
// process aborts as soon as the disk fills. This logger writes each line with one write(2) and
// ignores failures, so a full disk only loses log lines. Internal header.
#pragma once

#include <rocksdb/env.h>

#include <memory>
#include <string>

namespace sluice::internal {

// Opens <dir>/LOG for appending, after renaming an existing LOG to LOG.old (one generation
// kept). When the file cannot be opened, the logger discards every line. Thread-safe.
std::shared_ptr<rocksdb::Logger> OpenInfoLog(const std::string& dir);

}  // namespace sluice::internal
