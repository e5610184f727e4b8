// A whole Redis RDB file (a `dump.rdb`), versions 1 to 10 (Redis 7.0 writes 10): the "REDIS"
// header, AUX fields, SELECTDB, RESIZEDB, EXPIRETIME / EXPIRETIME_MS, IDLE and FREQ (skipped),
// every key's object (rdb_object.h), EOF and the CRC64 of the file.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "sluice/status.h"
#include "sluice/whole_value.h"

// The newest RDB file version read (what Redis 7.0 writes).
namespace sluice::formats {
inline constexpr int kRdbFileVersion = 10;
}

namespace sluice::formats {

struct RdbKey {
  int db = 0;
  std::string key;
  WholeValue value;
  int64_t expire_at_ms = 0;  // 0: none
  size_t end_offset = 0;     // bytes of the file read through this key (a load's progress)
};

// What a walk hands over, in file order; a non-OK Status from either stops the walk and is
// returned.
struct RdbVisitor {
  std::function<Status(RdbKey&)> key;
  // A function library's code (FUNCTION2, as FUNCTION LOAD takes it; Redis writes them before
  // the keys). Unset: a file holding libraries is refused.
  std::function<Status(std::string_view code)> function;
  // An AUX field (name, value) in file order; unset: skipped (as Redis skips unknown ones).
  // Sluice's full sync carries its limiter states in AUX fields (server/replication).
  std::function<Status(std::string_view name, std::string_view value)> aux;
};

// Walks `file`. The checksum is checked before any key is visited (a file written with
// rdbchecksum off carries 0 and is not checked). Refused, with a message naming the problem and
// its byte offset: a bad header or newer version (kInvalidArgument), damaged bytes
// (kCorruption), a database index of 16 or more, and what Sluice cannot hold (kInvalidArgument):
// module data, streams, function libraries when visit.function is unset. Keys are visited as they
// are read, so a caller that must write nothing of a damaged file walks it once with a visitor that
// only counts.
Status ReadRdbFile(std::string_view file, const RdbVisitor& visit);

}  // namespace sluice::formats
