// Loading a Redis RDB file (`dump.rdb`) into the store at start: how a Redis snapshot moves in.
#pragma once

#include <string>

#include "server/scripting/lua_functions.h"
#include "sluice/status.h"
#include "sluice/store.h"

namespace sluice::server {

// When `path` exists and the data dir is fresh (no key in any database, no function library),
// loads the file's function libraries into `functions` (as FUNCTION LOAD) and every key
// (values and expiry times; keys already expired are skipped, as a Redis master skips them),
// logging progress. The file is checked whole first (checksum, every object, every library
// compiled in a scratch registry), so a damaged or unsupported file is refused with its reason
// and nothing is written. A data dir that is not fresh ignores the file (one log line): the
// file is loaded once.
Status LoadRdbFileIfFresh(Store& store, FunctionRegistry& functions, const std::string& path);

}  // namespace sluice::server
