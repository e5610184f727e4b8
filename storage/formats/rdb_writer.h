// Writing a Redis RDB file (version 10, as Redis 7.0 writes it): the "REDIS0010" header, AUX
// fields, SELECTDB, EXPIRETIME_MS, every key's object (rdb_object.h), EOF and the CRC64 of the
// file. Full sync (server/replication) streams it to replicas, Sluice's or a real redis-server.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "sluice/whole_value.h"

namespace sluice::formats {

// Appends to a caller-owned buffer; the caller may send and clear() it between calls (the CRC
// runs over everything written). Not thread-safe.
class RdbWriter {
 public:
  explicit RdbWriter(std::string* out) : out_(out) {}
  // The header and the AUX fields Redis 7.0 writes first (redis-ver, redis-bits, ctime,
  // used-mem, aof-base), plus repl-stream-db / repl-id / repl-offset when repl_id is not empty.
  void Begin(int64_t ctime_s, std::string_view repl_id = {}, int64_t repl_offset = 0);
  void Aux(std::string_view name, std::string_view value);
  // A function library's code (FUNCTION2, as FUNCTION LOAD takes it); Redis writes them before
  // the first SELECTDB.
  void Function(std::string_view code);
  void SelectDb(int db);
  // One key; expire_at_ms 0: none. `value` must be a string or a non-empty collection.
  void Key(std::string_view key, const WholeValue& value, int64_t expire_at_ms);
  // EOF and the CRC64 of the whole file.
  void Finish();

 private:
  void Emit(std::string_view bytes);
  std::string* out_;
  uint64_t crc_ = 0;
  std::string scratch_;
};

}  // namespace sluice::formats
