// Generic key commands with Redis 7 semantics: DEL, EXISTS, PEXPIREAT (NX|XX|GT|LT, and XX
// with GT or LT), PTTL, PEXPIRETIME, PERSIST, TYPE, RENAME/RENAMENX, COPY.
#include <algorithm>
#include <mutex>

#include "store_impl.h"
#include "txn.h"

namespace sluice {

using internal::EncodeKey;
using internal::Entry;
using internal::kNoExpiry;
using internal::LockPool;
using internal::Txn;

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

// Commits txn and returns `value`, or the commit's error.
template <typename T>
Result<T> CommitThen(Txn& txn, T value) {
  Status s = txn.Commit();
  if (!s.ok()) return s;
  return value;
}

}  // namespace

Result<int64_t> Store::Del(int db, std::span<const std::string_view> keys) {
  std::vector<std::string> raw;
  raw.reserve(keys.size());
  for (std::string_view k : keys) raw.push_back(EncodeKey(db, k));
  std::sort(raw.begin(), raw.end());
  raw.erase(std::unique(raw.begin(), raw.end()), raw.end());  // DEL k k removes one key
  LockPool::MultiGuard guard(impl_->locks(), raw);
  Txn txn(*impl_);
  int64_t removed = 0;
  for (const auto& k : raw) {
    auto cur = txn.Read(k);
    if (!cur.ok()) return cur.status();
    if (!cur->has_value()) continue;
    txn.Delete(k);
    ++removed;
  }
  return CommitThen(txn, removed);
}

Result<int64_t> Store::Exists(int db, std::span<const std::string_view> keys) {
  const rocksdb::Snapshot* snap = impl_->db()->GetSnapshot();
  const int64_t now = NowMs();
  int64_t count = 0;  // repeated keys count each time, as in Redis
  Status error;
  for (std::string_view k : keys) {
    auto e = impl_->ReadLive(EncodeKey(db, k), now, snap);
    if (!e.ok()) {
      error = e.status();
      break;
    }
    if (e->has_value()) ++count;
  }
  impl_->db()->ReleaseSnapshot(snap);
  if (!error.ok()) return error;
  return count;
}

Result<bool> Store::ExpireAt(int db, std::string_view key, int64_t at_ms, ExpireCondition cond) {
  if (Status valid = ValidateExpireCondition(cond); !valid.ok()) return valid;
  const std::string raw = EncodeKey(db, key);
  std::lock_guard<std::mutex> lock(impl_->locks().ForKey(raw));
  Txn txn(*impl_);
  auto cur = txn.Read(raw);
  if (!cur.ok()) return cur.status();
  if (!cur->has_value() || !ExpireConditionHolds(cond, (*cur)->expire_at_ms, at_ms)) {
    return CommitThen(txn, false);
  }
  if (txn.AlreadyExpired(at_ms)) {
    txn.Delete(raw);
  } else {
    txn.Put(raw, (*cur)->kind, at_ms, (*cur)->payload);
  }
  return CommitThen(txn, true);
}

Result<int64_t> Store::PTtl(int db, std::string_view key) {
  const int64_t now = NowMs();
  auto e = impl_->ReadLive(EncodeKey(db, key), now);
  if (!e.ok()) return e.status();
  if (!e->has_value()) return int64_t{-2};
  if ((*e)->expire_at_ms == kNoExpiry) return int64_t{-1};
  return std::max<int64_t>(0, (*e)->expire_at_ms - now);
}

Result<int64_t> Store::ExpireTimeMs(int db, std::string_view key) {
  auto e = impl_->ReadLive(EncodeKey(db, key), NowMs());
  if (!e.ok()) return e.status();
  if (!e->has_value()) return int64_t{-2};
  return (*e)->expire_at_ms;  // kNoExpiry is -1
}

Result<bool> Store::Persist(int db, std::string_view key) {
  const std::string raw = EncodeKey(db, key);
  std::lock_guard<std::mutex> lock(impl_->locks().ForKey(raw));
  Txn txn(*impl_);
  auto cur = txn.Read(raw);
  if (!cur.ok()) return cur.status();
  if (!cur->has_value() || (*cur)->expire_at_ms == kNoExpiry) return CommitThen(txn, false);
  txn.Put(raw, (*cur)->kind, kNoExpiry, (*cur)->payload);
  return CommitThen(txn, true);
}

Result<std::optional<ValueKind>> Store::Type(int db, std::string_view key) {
  auto e = impl_->ReadLive(EncodeKey(db, key), NowMs());
  if (!e.ok()) return e.status();
  if (!e->has_value()) return std::optional<ValueKind>();
  return std::optional<ValueKind>((*e)->kind);
}

Result<bool> Store::Rename(int db, std::string_view src, std::string_view dst,
                           bool only_if_absent) {
  const std::string raw_src = EncodeKey(db, src);
  const std::string raw_dst = EncodeKey(db, dst);
  LockPool::MultiGuard guard(impl_->locks(), std::vector<std::string_view>{raw_src, raw_dst});
  Txn txn(*impl_);
  auto from = txn.Read(raw_src);
  if (!from.ok()) return from.status();
  if (!from->has_value()) {
    Status s = txn.Commit();
    return s.ok() ? Status::NoSuchKey() : s;
  }
  // Same key: nothing changes. RENAME says OK; RENAMENX says 0 (Redis 7).
  if (raw_src == raw_dst) return CommitThen(txn, !only_if_absent);
  auto to = txn.Read(raw_dst);
  if (!to.ok()) return to.status();
  if (to->has_value() && only_if_absent) return CommitThen(txn, false);
  txn.Put(raw_dst, **from);  // value and TTL move together
  txn.Delete(raw_src);
  return CommitThen(txn, true);
}

Result<bool> Store::Copy(int src_db, std::string_view src, int dst_db, std::string_view dst,
                         bool replace) {
  if (src_db == dst_db && src == dst) {
    return Status::InvalidArgument("source and destination objects are the same");
  }
  const std::string raw_src = EncodeKey(src_db, src);
  const std::string raw_dst = EncodeKey(dst_db, dst);
  LockPool::MultiGuard guard(impl_->locks(), std::vector<std::string_view>{raw_src, raw_dst});
  Txn txn(*impl_);
  auto from = txn.Read(raw_src);
  if (!from.ok()) return from.status();
  if (!from->has_value()) return CommitThen(txn, false);
  auto to = txn.Read(raw_dst);
  if (!to.ok()) return to.status();
  if (to->has_value() && !replace) return CommitThen(txn, false);
  txn.Put(raw_dst, **from);
  return CommitThen(txn, true);
}

}  // namespace sluice
