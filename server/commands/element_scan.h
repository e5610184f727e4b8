// HSCAN, SSCAN and ZSCAN share one argument parser and reply shape (element_scan.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "server/core/command.h"
#include "sluice/status.h"
#include "sluice/store.h"

namespace sluice::server {

struct ElementScanArgs {
  uint64_t cursor = 0;
  std::optional<std::string_view> match;  // nullopt: everything
  int64_t count = 10;
};

// The collection's size (0 when missing; kWrongType for another kind): HLEN, SCARD, ZCARD.
using ElementSizeFn = Result<int64_t> (*)(CommandContext& ctx, std::string_view key);
using ElementScanFn = Result<ElementScanReply> (*)(CommandContext& ctx, std::string_view key,
                                                   const ElementScanArgs& args);

// <cmd> key cursor [MATCH pattern] [COUNT count], with Redis 7.0's order of checks: the cursor
// ("ERR invalid cursor"), then the key (missing: cursor "0" and no elements, whatever the
// options; another type: WRONGTYPE), then the options (COUNT < 1 or an unknown option: syntax
// error). Replies [cursor, [element, value, ...]] (values only when `values`).
void ElementScanCommand(CommandContext& ctx, Args args, ElementSizeFn size, ElementScanFn scan,
                        bool values);

}  // namespace sluice::server
