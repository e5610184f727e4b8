// Redis's collection encoding thresholds (hash-max-listpack-entries/-value,
// set-max-intset-entries, zset-max-listpack-entries/-value): past them a collection takes
// Redis's big encoding (hashtable, skiplist) for OBJECT ENCODING and the behaviours that follow
// it (a set's member order, a small collection's whole-reply SCAN), and never goes back while
// the key lives, as in Redis. Process-wide, as Redis's server.* settings and
// sluice/stream_nodes.h; the server sets them from its configuration (CONFIG SET, the config
// file). Thread-safe (relaxed atomics); a change applies to the writes after it.
#pragma once

#include <cstdint>

namespace sluice {

struct EncodingLimits {  // Redis 7.0's defaults
  int64_t hash_max_listpack_entries = 512;
  int64_t hash_max_listpack_value = 64;  // bytes of a field or value
  int64_t set_max_intset_entries = 512;
  int64_t zset_max_listpack_entries = 128;
  int64_t zset_max_listpack_value = 64;  // bytes of a member
};

void SetEncodingLimits(const EncodingLimits& limits);
EncodingLimits GetEncodingLimits();

}  // namespace sluice
