// The string reads every string-valued family shares (strings, bitmaps, HyperLogLog, LCS).
// Internal header.
#pragma once

#include <optional>

#include "scratch.h"
#include "txn.h"

namespace sluice::internal {

// The key's current value as a string (the caller has claimed the key): nullopt when the key is
// missing or expired, kWrongType when it holds another kind.
inline Result<std::optional<Entry>> ReadString(Txn& txn, const RawKey& raw) {
  auto cur = txn.Read(raw);
  if (cur.ok() && cur->has_value() && (*cur)->kind != ValueKind::kString) {
    return Status::WrongType();
  }
  return cur;
}

}  // namespace sluice::internal
