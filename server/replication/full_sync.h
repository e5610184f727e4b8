// Full sync's two halves: the primary encodes a consistent snapshot of the store as an RDB file
// (Redis's types as RDB objects; Sluice's limiter states in "sluice-entry" AUX fields, which a
// real redis-server skips), and the replica loads one into its emptied store.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/status.h"
#include "sluice/store.h"
#include "storage/formats/rdb_writer.h"

namespace sluice::server::replication {

struct EncodeStats {
  int64_t keys = 0;
  int64_t skipped_limiters = 0;  // LEAKY/SLIDING/CONC states, with LimiterEntries::kSkip
};

// What becomes of limiter states that have no Redis form (LEAKY, SLIDING, CONC).
enum class LimiterEntries {
  kAsAux,  // sluice-entry AUX fields (a Sluice replica loads them, a redis-server skips them)
  kSkip,   // left out, counted in EncodeStats::skipped_limiters
};

// Appends every key of `store` (opened on a checkpoint, nothing else writing it) to `w`, database
// by database (SELECTDB before a database's first key), with its expiry time. The walk of both
// a full sync (EncodeRdb) and SAVE's dump.rdb (server/commands/rdb_save.cc).
Status EncodeRdbKeys(Store& store, formats::RdbWriter& w, LimiterEntries limiters,
                     EncodeStats* stats);

// Encodes the function libraries (`functions`: their code) and every key of `store` (opened on a
// checkpoint, nothing else writing it) as an RDB file appended to *out, with repl-id /
// repl-offset AUX fields.
Status EncodeRdb(Store& store, const std::vector<std::string>& functions, const std::string& replid,
                 int64_t offset, std::string* out, EncodeStats* stats);

// Empties `store` and loads `rdb` into it (Redis types, and the sluice-entry AUX fields).
// Returns the number of keys loaded in *keys and the function libraries' code in *functions.
// Reports its progress to the loading state (server/core/loading_state.h) and waits
// `key_load_delay_us` per key (Redis's key-load-delay; 0: none).
Status LoadRdb(Store& store, std::string_view rdb, int64_t* keys,
               std::vector<std::string>* functions, int64_t key_load_delay_us = 0);

}  // namespace sluice::server::replication
