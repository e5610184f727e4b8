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
  // As in Redis, a SETBIT that neither creates, grows nor flips anything writes nothing (a
  // WATCH on the key stays intact).
  const bool grows = !cur->has_value() || e.payload.size() <= offset / 8;
  if (e.payload.size() <= offset / 8) e.payload.resize(offset / 8 + 1, '\0');
  const bool old = bits::GetBit(e.payload, offset);
  if (grows || old != value) {
    bits::SetBit(&e.payload, offset, value);
    PutEditedInPlace(*txn_, raw, e);
  }
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
  // Written when the key is created or grown or a field changed (Redis's `changes`): a write
  // that stores what was there leaves a WATCH intact.
  bool changed = needed > 0 && (!cur->has_value() || e.payload.size() < needed);
  if (e.payload.size() < needed) e.payload.resize(needed, '\0');
  std::vector<std::optional<int64_t>> replies;
  replies.reserve(ops.size());
  for (const BitFieldOp& op : ops) {
    // The bytes a write touches (at most 9), to tell whether it changed them.
    const size_t first = op.offset / 8;
    const size_t len = (op.offset + op.bits - 1) / 8 - first + 1;
    const bool watch = op.kind != BitFieldOp::Kind::kGet && !changed;
    const std::string before = watch ? e.payload.substr(first, len) : std::string();
    replies.push_back(bits::ApplyBitField(&e.payload, op));
    if (watch) changed = e.payload.compare(first, len, before) != 0;
  }
  if (changed) PutEditedInPlace(*txn_, raw, e);
  return replies;
}

}  // namespace sluice
