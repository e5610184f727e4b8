// The key count of EVAL and FCALL (argument 2), with Redis 7.0's checks in its order: an
// integer (EVAL: "value is not an integer", FCALL: "Bad number of keys provided", passed as
// `not_integer`), at most the arguments that follow, not negative. Sets *n when they pass.
#pragma once

#include <cstddef>
#include <cstdint>

#include "server/core/args.h"
#include "server/core/command.h"
#include "server/core/errors.h"

namespace sluice::server {

inline Status ParseScriptNumKeys(Args args, const Status& not_integer, size_t* n) {
  const auto numkeys = ParseInt64(args[2]);
  if (!numkeys) return not_integer;
  if (*numkeys > static_cast<int64_t>(args.size()) - 3) return NumKeysTooMany();
  if (*numkeys < 0) return NumKeysNegative();
  *n = static_cast<size_t>(*numkeys);
  return Status::Ok();
}

}  // namespace sluice::server
