// Checks RocksDB write-ahead log files before the store opens them, so that a damaged log is
// reported with its file and byte offset, and a log merely cut short (a crash or power loss
// during a write) is told apart from one damaged in the middle. Reads the files only. Internal
// header.
//
// The format checked is RocksDB's (db/log_format.h, documented in its wiki "Write Ahead Log File
// Format"): 32 KiB blocks of records, each with a 7-byte header (masked CRC32C of type and
// payload, 2-byte length, 1-byte type); a block's last < 7 bytes are zero padding.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sluice::internal {

struct WalFinding {
  std::string file;        // path of the log file
  uint64_t offset = 0;     // byte offset of the first bad or incomplete record
  uint64_t size = 0;       // the file's size
  bool torn_tail = false;  // true: the file ends inside a record (cut short); else damaged
  std::string what;        // "checksum mismatch", "incomplete record at the end", ...
};

// RocksDB's write-ahead logs in `dir` (files named <number>.log; other *.log files are not
// theirs), in file-number order (none if it cannot be read).
std::vector<std::string> WalFiles(const std::string& dir);

// Checks every write-ahead log in `dir` (WalFiles, in file-number order). Returns one finding per
// file that is not clean: a torn tail, or the first damage in it.
std::vector<WalFinding> CheckWalFiles(const std::string& dir);

}  // namespace sluice::internal
