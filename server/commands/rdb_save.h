// Writing a Redis RDB file (`dump.rdb`, the `dbfilename` in `dir`) from a save's checkpoint: the
// reverse migration, and a snapshot for tools that read RDB files (docs/server.md "Saves and
// backups").
#pragma once

#include <cstdint>
#include <string>

#include "server/scripting/lua_functions.h"
#include "sluice/status.h"

namespace sluice::server {

// The AUX field naming the data dir whose SAVE wrote the file: at start, a dump.rdb carrying
// this data dir's own name is a backup of it and is not loaded into it (rdb_load.cc).
inline constexpr std::string_view kSavedFromAux = "sluice-saved-from";

struct RdbSaveStats {
  int64_t keys = 0;
  int64_t skipped_limiters = 0;  // LEAKY/SLIDING/CONC states have no Redis form
  int64_t bytes = 0;
};

// Opens the checkpoint at `checkpoint_dir` (read only in effect: nothing else writes it), encodes
// its keys and `functions`' libraries as a Redis 7.0 RDB file (version 10, CRC64) and writes it
// to `path` through a temporary file renamed over it, as Redis does.
Status WriteRdbFromCheckpoint(const std::string& checkpoint_dir, const FunctionRegistry& functions,
                              const std::string& data_dir, const std::string& path,
                              RdbSaveStats* stats);

}  // namespace sluice::server
