// Bitmaps on strings as Store::Transaction operations: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP,
// BITFIELD. The bit math is in bitmaps.h; here: reading the string, growing it with zero bytes
// where a write reaches past its end (keeping its TTL, as Redis changes it in place), writing it.
#include <string>
#include <vector>

#include "bitmaps.h"
#include "scratch.h"
#include "string_access.h"
#include "txn.h"

namespace sluice {

using internal::Entry;
using internal::kNoExpiry;
using internal::RawKey;
using internal::ReadString;
using internal::Txn;

namespace {

// The string a read-only bit command looks at: empty when the key is missing.
Result<std::string> ReadBits(Txn& txn, int db, std::string_view key) {
  const RawKey raw(db, key);
  if (Status c = txn.ClaimRead(raw); !c.ok()) return c;
  auto cur = ReadString(txn, raw);
  if (!cur.ok()) return cur.status();
  return cur->has_value() ? std::move((*cur)->payload) : std::string();
}

}  // namespace

Result<int64_t> Store::Transaction::SetBit(int db, std::string_view key, uint64_t offset,
                                           bool value) {
  const RawKey raw(db, key);
  if (Status c = txn_->ClaimWrite(raw); !c.ok()) return c;
  auto cur = ReadString(*txn_, raw);
  if (!cur.ok()) return cur.status();
  Entry e;
  if (cur->has_value()) e = std::move(**cur);
  if (e.payload.size() <= offset / 8) e.payload.resize(offset / 8 + 1, '\0');
  const bool old = bits::GetBit(e.payload, offset);
  bits::SetBit(&e.payload, offset, value);
  txn_->Put(raw, e);
  return old ? 1 : 0;
}

Result<int64_t> Store::Transaction::GetBit(int db, std::string_view key, uint64_t offset) {
  auto s = ReadBits(*txn_, db, key);
  if (!s.ok()) return s.status();
  return bits::GetBit(*s, offset) ? 1 : 0;
}

Result<int64_t> Store::Transaction::BitCount(int db, std::string_view key,
                                             const std::optional<BitRange>& range) {
  auto s = ReadBits(*txn_, db, key);
  if (!s.ok()) return s.status();
  std::optional<bits::BitSpan> span = bits::SelectBits(range ? *range : BitRange{}, s->size());
  return span ? bits::CountBits(*s, *span) : int64_t{0};
}

Result<int64_t> Store::Transaction::BitPos(int db, std::string_view key, bool bit,
                                           const std::optional<BitRange>& range) {
  const RawKey raw(db, key);
  if (Status c = txn_->ClaimRead(raw); !c.ok()) return c;
  auto cur = ReadString(*txn_, raw);
  if (!cur.ok()) return cur.status();
  // A missing key is an endless run of zeros.
  if (!cur->has_value()) return bit ? int64_t{-1} : int64_t{0};
  return bits::FindBit((*cur)->payload, bit, range);
}

Result<int64_t> Store::Transaction::BitOp(int db, BitOpKind op, std::string_view dst,
                                          std::span<const std::string_view> sources) {
  const RawKey dst_raw(db, dst);
  if (Status c = txn_->ClaimWrite(dst_raw); !c.ok()) return c;
  std::vector<std::string> values;
  values.reserve(sources.size());
  for (std::string_view key : sources) {
    auto s = ReadBits(*txn_, db, key);
    if (!s.ok()) return s.status();
    values.push_back(std::move(*s));
  }
  std::vector<std::string_view> views(values.begin(), values.end());
  const std::string result = bits::Combine(op, views);
  if (result.empty()) {
    auto cur = txn_->ReadView(dst_raw);
    if (!cur.ok()) return cur.status();
    if (cur->has_value()) txn_->Delete(dst_raw);
  } else {
    txn_->Put(dst_raw, ValueKind::kString, kNoExpiry, result);
  }
  return static_cast<int64_t>(result.size());
}

Result<std::vector<std::optional<int64_t>>> Store::Transaction::BitField(
    int db, std::string_view key, std::span<const BitFieldOp> ops) {
  const uint64_t needed = bits::BitFieldGrowth(ops);
  const RawKey raw(db, key);
  if (Status c = needed > 0 ? txn_->ClaimWrite(raw) : txn_->ClaimRead(raw); !c.ok()) return c;
  auto cur = ReadString(*txn_, raw);
  if (!cur.ok()) return cur.status();
  Entry e;
  if (cur->has_value()) e = std::move(**cur);
  if (e.payload.size() < needed) e.payload.resize(needed, '\0');
  std::vector<std::optional<int64_t>> replies;
  replies.reserve(ops.size());
  for (const BitFieldOp& op : ops) replies.push_back(bits::ApplyBitField(&e.payload, op));
  if (needed > 0) txn_->Put(raw, e);
  return replies;
}

}  // namespace sluice
