// HyperLogLog as Store::Transaction operations: PFADD, PFCOUNT, PFMERGE over strings in Redis's
// exact HLL representation (hyperloglog.h). Writes keep the key's TTL (Redis changes the string
// in place); a new key has none.
#include <string>
#include <vector>

#include "hyperloglog.h"
#include "scratch.h"
#include "store_impl.h"
#include "string_access.h"
#include "txn.h"

namespace sluice {

using internal::Entry;
using internal::RawKey;
using internal::ReadString;
using internal::Txn;

namespace {

Status NotAnHll() {
  return Status::InvalidArgument("WRONGTYPE Key is not a valid HyperLogLog string value.");
}
Status CorruptHll() { return Status::InvalidArgument("INVALIDOBJ Corrupted HLL object detected"); }

size_t SparseMax(Txn& txn) {
  const int64_t max = txn.impl().hll_sparse_max_bytes();
  return max < 0 ? 0 : static_cast<size_t>(max);
}

// The key's HLL string: nullopt when missing; kWrongType for another kind, NotAnHll for a string
// that is not an HLL.
Result<std::optional<Entry>> ReadHll(Txn& txn, const RawKey& raw) {
  auto cur = ReadString(txn, raw);
  if (cur.ok() && cur->has_value() && !hll::LooksValid((*cur)->payload)) return NotAnHll();
  return cur;
}

// Every source's registers raised into *max; sets *any_dense when a source is dense.
Status MergeSources(Txn& txn, int db, std::span<const std::string_view> keys, hll::Registers* max,
                    bool* any_dense) {
  for (std::string_view key : keys) {
    const RawKey raw(db, key);
    if (Status c = txn.ClaimRead(raw); !c.ok()) return c;
    auto cur = ReadHll(txn, raw);
    if (!cur.ok()) return cur.status();
    if (!cur->has_value()) continue;
    if (hll::IsDense((*cur)->payload)) *any_dense = true;
    if (!hll::MergeInto((*cur)->payload, max)) return CorruptHll();
  }
  return Status::Ok();
}

}  // namespace

Result<bool> Store::Transaction::PfAdd(int db, std::string_view key,
                                       std::span<const std::string_view> elements) {
  const RawKey raw(db, key);
  if (Status c = txn_->ClaimWrite(raw); !c.ok()) return c;
  auto cur = ReadHll(*txn_, raw);
  if (!cur.ok()) return cur.status();
  bool updated = !cur->has_value();
  Entry e;
  if (cur->has_value()) {
    e = std::move(**cur);
  } else {
    e.payload = hll::NewSparse();
  }
  for (std::string_view element : elements) {
    const hll::Change change = hll::Add(&e.payload, element, SparseMax(*txn_));
    if (change == hll::Change::kCorrupt) return CorruptHll();
    updated = updated || change == hll::Change::kChanged;
  }
  if (updated) {
    hll::InvalidateCachedCount(&e.payload);
    PutEditedInPlace(*txn_, raw, e);
  }
  return updated;
}

Result<int64_t> Store::Transaction::PfCount(int db, std::span<const std::string_view> keys) {
  if (keys.size() > 1) {
    hll::Registers max{};
    bool any_dense = false;
    if (Status s = MergeSources(*txn_, db, keys, &max, &any_dense); !s.ok()) return s;
    return static_cast<int64_t>(hll::Count(max));
  }
  // One key: its cached count, or a fresh one written back into the string (Redis does too).
  const RawKey raw(db, keys[0]);
  if (Status c = txn_->ClaimWrite(raw); !c.ok()) return c;
  auto cur = ReadHll(*txn_, raw);
  if (!cur.ok()) return cur.status();
  if (!cur->has_value()) return int64_t{0};
  Entry& e = **cur;
  if (std::optional<uint64_t> cached = hll::CachedCount(e.payload)) {
    return static_cast<int64_t>(*cached);
  }
  std::optional<uint64_t> count = hll::Count(e.payload);
  if (!count) return CorruptHll();
  hll::StoreCachedCount(&e.payload, *count);
  PutEditedInPlace(*txn_, raw, e);
  return static_cast<int64_t>(*count);
}

Result<Store::Transaction::PfDebugReply> Store::Transaction::PfDebug(int db, std::string_view key,
                                                                     PfDebugOp op) {
  const RawKey raw(db, key);
  if (Status c = txn_->ClaimWrite(raw); !c.ok()) return c;
  auto cur = ReadHll(*txn_, raw);
  if (!cur.ok()) return cur.status();
  if (!cur->has_value()) return Status::NoSuchKey();
  Entry& e = **cur;
  PfDebugReply reply;
  const bool sparse = !hll::IsDense(e.payload);
  switch (op) {
    case PfDebugOp::kCheck:
      break;
    case PfDebugOp::kEncoding:
      reply.text = sparse ? "sparse" : "dense";
      break;
    case PfDebugOp::kDecode:
      if (!sparse) return Status::InvalidArgument("ERR HLL encoding is not sparse");
      reply.text = hll::DescribeSparse(e.payload);
      break;
    case PfDebugOp::kGetReg:
    case PfDebugOp::kToDense: {
      if (sparse) {
        if (!hll::ToDense(&e.payload)) return CorruptHll();
        PutEditedInPlace(*txn_, raw, e);
        reply.converted = true;
      }
      if (op == PfDebugOp::kToDense) break;
      hll::Registers registers{};
      hll::MergeInto(e.payload, &registers);
      reply.registers.assign(registers.begin(), registers.end());
      break;
    }
  }
  return reply;
}

Status Store::Transaction::PfMerge(int db, std::string_view dst,
                                   std::span<const std::string_view> sources) {
  const RawKey raw(db, dst);
  if (Status c = txn_->ClaimWrite(raw); !c.ok()) return c;
  hll::Registers max{};
  bool any_dense = false;
  const std::string_view dst_key[] = {dst};
  if (Status s = MergeSources(*txn_, db, dst_key, &max, &any_dense); !s.ok()) return s;
  if (Status s = MergeSources(*txn_, db, sources, &max, &any_dense); !s.ok()) return s;
  auto cur = ReadHll(*txn_, raw);
  if (!cur.ok()) return cur.status();
  Entry e;
  if (cur->has_value()) {
    e = std::move(**cur);
  } else {
    e.payload = hll::NewSparse();
  }
  if (any_dense && !hll::ToDense(&e.payload)) return CorruptHll();
  for (int i = 0; i < hll::kRegisters; ++i) {
    if (max[i] != 0) hll::SetRegister(&e.payload, i, max[i], SparseMax(*txn_));
  }
  hll::InvalidateCachedCount(&e.payload);
  PutEditedInPlace(*txn_, raw, e);
  return Status::Ok();
}

}  // namespace sluice
