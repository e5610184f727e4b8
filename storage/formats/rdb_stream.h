// A stream as an RDB object (Redis 7.0's rdb.c, RDB version 10): the radix tree of listpack
// nodes (each node: its 16-byte big-endian master ID, then the listpack of its master entry and
// delta-encoded entries, t_stream.c's layout), the length, last ID, first ID, max deleted ID,
// entries added, and the consumer groups (last ID, entries read, PEL with delivery times and
// counts, consumers with their seen time and their PEL IDs).
//
// Read: RDB_TYPE_STREAM_LISTPACKS (15, Redis 5/6: no first/max-deleted IDs, entries-added or
// entries-read, which are derived as Redis 7.0 derives them), _2 (19, what Redis 7.0 writes)
// and _3 (21, Redis 7.2: a consumer's active time, which Sluice does not keep, is skipped).
// Written: _2, byte for byte as Redis 7.0 writes the same stream when its nodes hold no
// deleted entries (tombstones are not kept, so a node with some is written without them).
#pragma once

#include <cstdint>
#include <string>

#include "sluice/status.h"
#include "sluice/stream_whole.h"
#include "storage/formats/rdb_primitives.h"

namespace sluice::formats {

// `type` is 15, 19 or 21. kCorruption for damaged bytes or an inconsistent stream (entries out
// of order or outside their node, a PEL entry without a consumer or a consumer's PEL ID not in
// its group's PEL, repeated groups or consumers, a length that is not the entries' count).
Status ReadStream(uint8_t type, ByteReader& in, StreamWhole* out);
// The value of type 19 (without the type byte).
void WriteStream(const StreamWhole& stream, std::string* out);

}  // namespace sluice::formats
