// The string reads every string-valued family shares (strings, bitmaps, HyperLogLog, LCS), and
// the write of a string edited in place.
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

// Writes e, a string edited in place (APPEND to it, SETRANGE, SETBIT, BITFIELD, a HyperLogLog),
// marked so: Redis reports such a string's OBJECT ENCODING as "raw" whatever its bytes.
inline void PutEditedInPlace(Txn& txn, const std::string& raw, Entry& e) {
  e.raw_encoding = true;
  txn.Put(raw, e);
}

}  // namespace sluice::internal
