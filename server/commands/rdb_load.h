// Loading a Redis RDB file (`dump.rdb`) into the store at start: how a Redis snapshot moves in.
#pragma once

#include <string>

#include "sluice/status.h"
#include "sluice/store.h"

namespace sluice::server {

// When `path` exists and the store holds no key in any database, loads every key of the file
// (values and expiry times; keys already expired are skipped, as a Redis master skips them),
// logging progress. The file is checked whole first (checksum, every object), so a damaged or
// unsupported file is refused with its reason and nothing is written. A store that already has
// keys ignores the file (one log line): the file is loaded once, into an empty data dir.
Status LoadRdbFileIfFresh(Store& store, const std::string& path);

}  // namespace sluice::server
