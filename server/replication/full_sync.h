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

namespace sluice::server::replication {

struct EncodeStats {
  int64_t keys = 0;
  int64_t skipped_streams = 0;  // streams have no whole form yet: not sent
};

// Encodes the function libraries (`functions`: their code) and every key of `store` (opened on a
// checkpoint, nothing else writing it) as an RDB file appended to *out, with repl-id /
// repl-offset AUX fields.
Status EncodeRdb(Store& store, const std::vector<std::string>& functions, const std::string& replid,
                 int64_t offset, std::string* out, EncodeStats* stats);

// Empties `store` and loads `rdb` into it (Redis types, and the sluice-entry AUX fields).
// Returns the number of keys loaded in *keys and the function libraries' code in *functions.
Status LoadRdb(Store& store, std::string_view rdb, int64_t* keys,
               std::vector<std::string>* functions);

}  // namespace sluice::server::replication
