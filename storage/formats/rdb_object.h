// One RDB object (a type byte and its value) <-> sluice::WholeValue, as Redis 7.0 (RDB version
// 10) reads and writes them inside RDB files and DUMP payloads.
//
// Read: strings (raw, int, LZF); lists (plain, ziplist, quicklist of ziplists, quicklist 2 of
// listpacks and plain nodes); sets (plain, intset, listpack); hashes (plain, ziplist, listpack);
// sorted sets (text and binary doubles, ziplist, listpack); streams (types 15, 19, 21:
// rdb_stream.h). Module values are refused (Sluice loads no modules). Empty collections (an
// empty stream is a value), repeated set members, hash fields or sorted set members, and NaN
// scores are refused, as Redis refuses them.
//
// Written: the plain forms every Redis 7.0 loads: a string, a plain list (type 1), a plain set
// (2), a plain hash (4) and a sorted set with binary doubles (5); Redis re-encodes them into
// its compact forms on load when they are small; a stream as type 19 (RDB_TYPE_STREAM_LISTPACKS_2,
// the form Redis 7.0 writes).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "sluice/status.h"
#include "sluice/store.h"
#include "sluice/whole_value.h"
#include "storage/formats/rdb_primitives.h"

namespace sluice::formats {

// RDB type bytes (rdb.h of Redis 7.0).
enum RdbType : uint8_t {
  kRdbString = 0,
  kRdbList = 1,
  kRdbSet = 2,
  kRdbZSet = 3,
  kRdbHash = 4,
  kRdbZSet2 = 5,
  kRdbModule = 6,
  kRdbModule2 = 7,
  kRdbHashZipmap = 9,
  kRdbListZiplist = 10,
  kRdbSetIntset = 11,
  kRdbZSetZiplist = 12,
  kRdbHashZiplist = 13,
  kRdbListQuicklist = 14,
  kRdbStreamListpacks = 15,
  kRdbHashListpack = 16,
  kRdbZSetListpack = 17,
  kRdbListQuicklist2 = 18,
  kRdbStreamListpacks2 = 19,
  kRdbSetListpack = 20,
  kRdbStreamListpacks3 = 21,  // Redis 7.2 (read only)
};

// True for the type bytes of objects (as opposed to the RDB file's opcodes, 0xf5 and up).
bool IsObjectType(uint8_t type);

// Reads the value of an object whose type byte was `type`. kCorruption (message: what was wrong)
// for damaged bytes; kInvalidArgument for a type Sluice cannot hold (modules, zipmaps), the
// message naming it. On error *out is unspecified.
Status ReadObject(uint8_t type, ByteReader& in, WholeValue* out);
// The type byte, then the value.
Status ReadTypedObject(ByteReader& in, WholeValue* out);
// Appends the type byte and the value.
void WriteTypedObject(const WholeValue& value, std::string* out);

}  // namespace sluice::formats
