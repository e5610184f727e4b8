// Generic key commands with Redis 7 semantics: DEL, EXISTS, PEXPIREAT (NX|XX|GT|LT, and XX
// with GT or LT), PTTL, PEXPIRETIME, PERSIST, TYPE, RENAME/RENAMENX, COPY.
#include <algorithm>
#include <charconv>
#include <string>

#include "collection.h"
#include "store_impl.h"
#include "txn.h"

namespace sluice {

using internal::EncodeKey;
using internal::Entry;
using internal::kNoExpiry;
using internal::RawKey;
using internal::Txn;

// TYPE's names (store.h).
const char* TypeName(ValueKind kind) {
  switch (kind) {
    case ValueKind::kString:
      return "string";
    case ValueKind::kLeaky:
      return "leaky";
    case ValueKind::kSliding:
      return "sliding";
    case ValueKind::kConc:
      return "conc";
    case ValueKind::kHash:
      return "hash";
    case ValueKind::kList:
      return "list";
    case ValueKind::kSet:
      return "set";
    case ValueKind::kZSet:
      return "zset";
    case ValueKind::kStream:
      return "stream";
  }
  return "none";
}

namespace {

// Checks a set of ExpireAt conditions against the combinations Redis accepts (the server
// rejects the others first, with Redis's own texts).
Status ValidateExpireCondition(ExpireCondition cond) {
  using C = ExpireCondition;
  if (!HasAll(C::kNX | C::kXX | C::kGT | C::kLT, cond)) {
    return Status::InvalidArgument("invalid expire condition: unknown flag");
  }
  if (HasAll(cond, C::kNX) && cond != C::kNX) {
    return Status::InvalidArgument("invalid expire condition: NX with XX, GT or LT");
  }
  if (HasAll(cond, C::kGT | C::kLT)) {
    return Status::InvalidArgument("invalid expire condition: GT with LT");
  }
  return Status::Ok();
}

// Redis 7's expireGenericCommand: every given flag must hold. `current` is the key's expiry
// (kNoExpiry when it has none, which counts as an infinite TTL for GT and LT).
bool ExpireConditionHolds(ExpireCondition cond, int64_t current, int64_t at_ms) {
  using C = ExpireCondition;
  const bool has_ttl = current != kNoExpiry;
  if (HasAll(cond, C::kNX) && has_ttl) return false;
  if (HasAll(cond, C::kXX) && !has_ttl) return false;
  if (HasAll(cond, C::kGT) && (!has_ttl || at_ms <= current)) return false;
  if (HasAll(cond, C::kLT) && has_ttl && at_ms >= current) return false;
  return true;
}

// A key's live entry, for the reads of its type and TTL: nullopt when missing.
Result<std::optional<internal::EntryView>> ReadLive(Txn& txn, int db, std::string_view key) {
  const RawKey raw(db, key);
  if (Status c = txn.ClaimRead(raw); !c.ok()) return c;
  return txn.ReadView(raw);
}

}  // namespace

Result<int64_t> Store::Transaction::Del(int db, std::span<const std::string_view> keys) {
  std::vector<std::string> raw;
  raw.reserve(keys.size());
  for (std::string_view k : keys) raw.push_back(EncodeKey(db, k));
  std::sort(raw.begin(), raw.end());
  raw.erase(std::unique(raw.begin(), raw.end()), raw.end());  // DEL k k removes one key
  for (const auto& k : raw) {
    if (Status c = txn_->ClaimWrite(k); !c.ok()) return c;
  }
  int64_t removed = 0;
  for (const auto& k : raw) {
    auto cur = txn_->ReadView(k);
    if (!cur.ok()) return cur.status();
    if (!cur->has_value()) {
      // A replica keeps expired values until its primary's DEL (Store::set_keep_expired): that
      // DEL removes the stored value (counted out as the expired key it is; the reply, which
      // only the primary's link sees, says 0 as for a missing key).
      if (txn_->impl().keep_expired()) {
        std::string stored;
        bool found = false;
        Status g = txn_->GetRaw(txn_->impl().db()->DefaultColumnFamily(), k, &stored, &found);
        if (!g.ok()) return g;
        if (found) txn_->Delete(k);
      }
      continue;
    }
    txn_->Delete(k);
    ++removed;
  }
  return removed;
}

Result<int64_t> Store::Transaction::Exists(int db, std::span<const std::string_view> keys) {
  for (std::string_view k : keys) {
    if (Status c = ClaimRead(db, k); !c.ok()) return c;
  }
  Txn::SnapshotReads one_state(*txn_);
  int64_t count = 0;  // repeated keys count each time, as in Redis
  for (std::string_view k : keys) {
    auto e = txn_->ReadView(RawKey(db, k));
    if (!e.ok()) return e.status();
    if (e->has_value()) ++count;
  }
  return count;
}

Result<bool> Store::Transaction::ExpireAt(int db, std::string_view key, int64_t at_ms,
                                          ExpireCondition cond) {
  if (Status valid = ValidateExpireCondition(cond); !valid.ok()) return valid;
  const RawKey raw(db, key);
  if (Status c = txn_->ClaimWrite(raw); !c.ok()) return c;
  auto cur = txn_->ReadView(raw);  // Put copies the viewed payload before anything reads again
  if (!cur.ok()) return cur.status();
  if (!cur->has_value() || !ExpireConditionHolds(cond, (*cur)->expire_at_ms, at_ms)) return false;
  if (txn_->AlreadyExpired(at_ms)) {
    txn_->Delete(raw);
  } else {
    internal::EntryView v = **cur;
    v.expire_at_ms = at_ms;
    txn_->Put(raw, v);
  }
  return true;
}

Result<int64_t> Store::Transaction::PTtl(int db, std::string_view key) {
  auto e = ReadLive(*txn_, db, key);
  if (!e.ok()) return e.status();
  if (!e->has_value()) return int64_t{-2};
  if ((*e)->expire_at_ms == kNoExpiry) return int64_t{-1};
  return std::max<int64_t>(0, (*e)->expire_at_ms - txn_->now_ms());
}

Result<int64_t> Store::Transaction::ExpireTimeMs(int db, std::string_view key) {
  auto e = ReadLive(*txn_, db, key);
  if (!e.ok()) return e.status();
  if (!e->has_value()) return int64_t{-2};
  return (*e)->expire_at_ms;  // kNoExpiry is -1
}

Result<bool> Store::Transaction::Persist(int db, std::string_view key) {
  const RawKey raw(db, key);
  if (Status c = txn_->ClaimWrite(raw); !c.ok()) return c;
  auto cur = txn_->Read(raw);
  if (!cur.ok()) return cur.status();
  if (!cur->has_value() || (*cur)->expire_at_ms == kNoExpiry) return false;
  (*cur)->expire_at_ms = kNoExpiry;
  txn_->Put(raw, **cur);
  return true;
}

namespace {

// Redis's string encodings: "int" for a value string2ll reads back exactly, "embstr" up to 44
// bytes, "raw" beyond.
const char* StringEncodingName(std::string_view v) {
  if (!v.empty() && v.size() <= 20) {
    int64_t n = 0;
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec == std::errc() && end == v.data() + v.size() && std::to_string(n) == v) return "int";
  }
  return v.size() <= 44 ? "embstr" : "raw";
}

}  // namespace

Result<std::optional<std::string>> Store::Transaction::ObjectEncoding(int db,
                                                                      std::string_view key) {
  auto e = ReadLive(*txn_, db, key);
  if (!e.ok()) return e.status();
  if (!e->has_value()) return std::optional<std::string>();
  const internal::EntryView& v = **e;
  if (v.kind == ValueKind::kString) {
    return std::optional<std::string>(v.raw_encoding ? "raw" : StringEncodingName(v.payload));
  }
  if (!IsCollection(v.kind)) return std::optional<std::string>("raw");
  auto meta = internal::DecodeMeta(v.payload);
  if (!meta) return Status::Corruption("invalid collection metadata");
  return std::optional<std::string>(internal::CollectionEncodingName(v.kind, *meta));
}

Result<std::optional<ValueKind>> Store::Transaction::Type(int db, std::string_view key) {
  auto e = ReadLive(*txn_, db, key);
  if (!e.ok()) return e.status();
  if (!e->has_value()) return std::optional<ValueKind>();
  return std::optional<ValueKind>((*e)->kind);
}

Result<bool> Store::Transaction::Rename(int db, std::string_view src, std::string_view dst,
                                        bool only_if_absent) {
  const std::string raw_src = EncodeKey(db, src);
  const std::string raw_dst = EncodeKey(db, dst);
  if (Status c = txn_->ClaimWrite(raw_src); !c.ok()) return c;
  if (Status c = txn_->ClaimWrite(raw_dst); !c.ok()) return c;
  auto from = txn_->Read(raw_src);
  if (!from.ok()) return from.status();
  if (!from->has_value()) return Status::NoSuchKey();
  // Same key: nothing changes. RENAME says OK; RENAMENX says 0 (Redis 7).
  if (raw_src == raw_dst) return !only_if_absent;
  auto to = txn_->ReadView(raw_dst);
  if (!to.ok()) return to.status();
  if (to->has_value() && only_if_absent) return false;
  if (IsCollection((*from)->kind)) {
    Status c = internal::CopyCollection(*txn_, (*from)->kind, db, src, db, dst);
    if (!c.ok()) return c;
  } else {
    txn_->Put(raw_dst, **from);  // value and TTL move together
  }
  txn_->Delete(raw_src);
  return true;
}

Result<bool> Store::Transaction::Copy(int src_db, std::string_view src, int dst_db,
                                      std::string_view dst, bool replace) {
  if (src_db == dst_db && src == dst) {
    return Status::InvalidArgument("source and destination objects are the same");
  }
  const std::string raw_src = EncodeKey(src_db, src);
  const std::string raw_dst = EncodeKey(dst_db, dst);
  if (Status c = txn_->ClaimRead(raw_src); !c.ok()) return c;
  if (Status c = txn_->ClaimWrite(raw_dst); !c.ok()) return c;
  auto from = txn_->Read(raw_src);
  if (!from.ok()) return from.status();
  if (!from->has_value()) return false;
  auto to = txn_->ReadView(raw_dst);
  if (!to.ok()) return to.status();
  if (to->has_value() && !replace) return false;
  if (IsCollection((*from)->kind)) {
    Status c = internal::CopyCollection(*txn_, (*from)->kind, src_db, src, dst_db, dst);
    if (!c.ok()) return c;
  } else {
    txn_->Put(raw_dst, **from);
  }
  return true;
}

}  // namespace sluice
