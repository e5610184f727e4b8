// The Store's auto-commit operations: each runs the Store::Transaction operation of the same name
// in a unit of its own and commits it. Writes declare (and so lock) their keys; reads run in a
// unit that locks nothing and sees the latest committed state.
#include <vector>

#include "encoding.h"
#include "sluice/store.h"

namespace sluice {

namespace {

using Pairs = std::span<const std::pair<std::string_view, std::string_view>>;
using Txn = Store::Transaction;

// Commits the unit; the op's error wins over the commit's (a failed op staged nothing).
template <typename T>
Result<T> Finish(Txn& t, Result<T> r) {
  Status s = t.Commit();
  if (!r.ok()) return r;
  if (!s.ok()) return s;
  return r;
}

Status Finish(Txn& t, Status r) {
  Status s = t.Commit();
  return r.ok() ? s : r;
}

// A unit declaring `keys`, for writes.
template <typename Op>
auto WriteUnit(Store& store, std::span<const KeyRef> keys, Op&& op) {
  Txn t(store, keys);
  return Finish(t, op(t));
}

template <typename Op>
auto WriteOne(Store& store, int db, std::string_view key, Op&& op) {
  const KeyRef keys[] = {{db, key}};
  return WriteUnit(store, keys, op);
}

// A unit that locks nothing, for reads.
template <typename Op>
auto ReadUnit(Store& store, Op&& op) {
  Txn t(store, {}, TransactionOptions{.all_keys = false, .isolate_reads = false});
  return Finish(t, op(t));
}

std::vector<KeyRef> Refs(int db, std::span<const std::string_view> keys) {
  std::vector<KeyRef> refs;
  refs.reserve(keys.size());
  for (std::string_view k : keys) refs.push_back({db, k});
  return refs;
}

std::vector<KeyRef> Refs(int db, Pairs pairs) {
  std::vector<KeyRef> refs;
  refs.reserve(pairs.size());
  for (const auto& [k, v] : pairs) refs.push_back({db, k});
  return refs;
}

}  // namespace

// ---- Strings

Result<std::optional<std::string>> Store::Get(int db, std::string_view key) {
  return ReadUnit(*this, [&](Txn& t) { return t.Get(db, key); });
}

Status Store::GetInto(int db, std::string_view key, std::string* value, bool* found) {
  return ReadUnit(*this, [&](Txn& t) { return t.GetInto(db, key, value, found); });
}

Result<SetReply> Store::Set(int db, std::string_view key, std::string_view value,
                            const SetOptions& options) {
  return WriteOne(*this, db, key, [&](Txn& t) { return t.Set(db, key, value, options); });
}

Result<std::optional<std::string>> Store::GetDel(int db, std::string_view key) {
  return WriteOne(*this, db, key, [&](Txn& t) { return t.GetDel(db, key); });
}

Result<std::optional<std::string>> Store::GetEx(int db, std::string_view key, ExpiryChange change) {
  return WriteOne(*this, db, key, [&](Txn& t) { return t.GetEx(db, key, change); });
}

Result<std::vector<std::optional<std::string>>> Store::MGet(
    int db, std::span<const std::string_view> keys) {
  return ReadUnit(*this, [&](Txn& t) { return t.MGet(db, keys); });
}

Status Store::MSet(int db, Pairs pairs) {
  return WriteUnit(*this, Refs(db, pairs), [&](Txn& t) { return t.MSet(db, pairs); });
}

Result<bool> Store::MSetNx(int db, Pairs pairs) {
  return WriteUnit(*this, Refs(db, pairs), [&](Txn& t) { return t.MSetNx(db, pairs); });
}

Result<int64_t> Store::IncrBy(int db, std::string_view key, int64_t delta) {
  return WriteOne(*this, db, key, [&](Txn& t) { return t.IncrBy(db, key, delta); });
}

Result<std::string> Store::IncrByFloat(int db, std::string_view key, long double delta) {
  return WriteOne(*this, db, key, [&](Txn& t) { return t.IncrByFloat(db, key, delta); });
}

Result<int64_t> Store::Append(int db, std::string_view key, std::string_view value) {
  return WriteOne(*this, db, key, [&](Txn& t) { return t.Append(db, key, value); });
}

Result<int64_t> Store::StrLen(int db, std::string_view key) {
  return ReadUnit(*this, [&](Txn& t) { return t.StrLen(db, key); });
}

Result<std::string> Store::GetRange(int db, std::string_view key, int64_t start, int64_t end) {
  return ReadUnit(*this, [&](Txn& t) { return t.GetRange(db, key, start, end); });
}

Result<int64_t> Store::SetRange(int db, std::string_view key, int64_t offset,
                                std::string_view value) {
  return WriteOne(*this, db, key, [&](Txn& t) { return t.SetRange(db, key, offset, value); });
}

// ---- Keys

Result<int64_t> Store::Del(int db, std::span<const std::string_view> keys) {
  return WriteUnit(*this, Refs(db, keys), [&](Txn& t) { return t.Del(db, keys); });
}

Result<int64_t> Store::Exists(int db, std::span<const std::string_view> keys) {
  return ReadUnit(*this, [&](Txn& t) { return t.Exists(db, keys); });
}

Result<bool> Store::ExpireAt(int db, std::string_view key, int64_t at_ms, ExpireCondition cond) {
  return WriteOne(*this, db, key, [&](Txn& t) { return t.ExpireAt(db, key, at_ms, cond); });
}

Result<int64_t> Store::PTtl(int db, std::string_view key) {
  return ReadUnit(*this, [&](Txn& t) { return t.PTtl(db, key); });
}

Result<int64_t> Store::ExpireTimeMs(int db, std::string_view key) {
  return ReadUnit(*this, [&](Txn& t) { return t.ExpireTimeMs(db, key); });
}

Result<bool> Store::Persist(int db, std::string_view key) {
  return WriteOne(*this, db, key, [&](Txn& t) { return t.Persist(db, key); });
}

Result<std::optional<ValueKind>> Store::Type(int db, std::string_view key) {
  return ReadUnit(*this, [&](Txn& t) { return t.Type(db, key); });
}

Result<std::optional<std::string>> Store::ObjectEncoding(int db, std::string_view key) {
  return ReadUnit(*this, [&](Txn& t) { return t.ObjectEncoding(db, key); });
}

Result<bool> Store::Rename(int db, std::string_view src, std::string_view dst,
                           bool only_if_absent) {
  const KeyRef keys[] = {{db, src}, {db, dst}};
  return WriteUnit(*this, keys, [&](Txn& t) { return t.Rename(db, src, dst, only_if_absent); });
}

Result<bool> Store::Copy(int src_db, std::string_view src, int dst_db, std::string_view dst,
                         bool replace) {
  const KeyRef keys[] = {{src_db, src}, {dst_db, dst}};
  return WriteUnit(*this, keys, [&](Txn& t) { return t.Copy(src_db, src, dst_db, dst, replace); });
}

Result<std::vector<std::string>> Store::Keys(int db, std::string_view pattern) {
  return ReadUnit(*this, [&](Txn& t) { return t.Keys(db, pattern); });
}

Result<ScanPage> Store::Scan(int db, uint64_t cursor, std::optional<std::string_view> match,
                             int64_t count, std::optional<std::string_view> type) {
  return ReadUnit(*this, [&](Txn& t) { return t.Scan(db, cursor, match, count, type); });
}

Result<std::optional<std::string>> Store::RandomKey(int db) {
  return ReadUnit(*this, [&](Txn& t) { return t.RandomKey(db); });
}

Result<int64_t> Store::DbSize(int db) {
  return ReadUnit(*this, [&](Txn& t) { return t.DbSize(db); });
}

Result<KeyspaceInfo> Store::Keyspace(int db) {
  return ReadUnit(*this, [&](Txn& t) { return t.Keyspace(db); });
}

uint16_t Store::KeySlot(std::string_view key) { return internal::KeySlot(key); }

Result<int64_t> Store::CountKeysInSlot(int db, uint16_t slot) {
  return ReadUnit(*this, [&](Txn& t) { return t.CountKeysInSlot(db, slot); });
}

Result<std::vector<std::string>> Store::KeysInSlot(int db, uint16_t slot, int64_t limit) {
  return ReadUnit(*this, [&](Txn& t) { return t.KeysInSlot(db, slot, limit); });
}

// The slot's keys are listed first, then deleted in one unit holding their stripes; a key
// written into the slot in between survives (the cluster stopped routing the slot here first).
Result<int64_t> Store::DeleteKeysInSlot(int db, uint16_t slot) {
  auto keys = KeysInSlot(db, slot, -1);
  if (!keys.ok()) return keys.status();
  std::vector<std::string_view> views(keys->begin(), keys->end());
  if (views.empty()) return int64_t{0};
  return Del(db, views);
}

Status Store::FlushDb(int db) {
  Txn t(*this, {}, TransactionOptions{.all_keys = true});
  return Finish(t, t.FlushDb(db));
}

Status Store::FlushAll() {
  Txn t(*this, {}, TransactionOptions{.all_keys = true});
  return Finish(t, t.FlushAll());
}

// ---- Limiters

Result<limiter::Decision> Store::GcraTake(int db, std::string_view key,
                                          const limiter::GcraParams& p, int64_t cost) {
  return WriteOne(*this, db, key, [&](Txn& t) { return t.GcraTake(db, key, p, cost); });
}

Result<limiter::Decision> Store::LeakyTake(int db, std::string_view key,
                                           const limiter::LeakyParams& p, int64_t cost) {
  return WriteOne(*this, db, key, [&](Txn& t) { return t.LeakyTake(db, key, p, cost); });
}

Result<limiter::Decision> Store::WindowTake(int db, std::string_view key,
                                            const limiter::WindowParams& p, int64_t cost) {
  return WriteOne(*this, db, key, [&](Txn& t) { return t.WindowTake(db, key, p, cost); });
}

Result<limiter::Decision> Store::SlidingTake(int db, std::string_view key,
                                             const limiter::SlidingParams& p, int64_t cost) {
  return WriteOne(*this, db, key, [&](Txn& t) { return t.SlidingTake(db, key, p, cost); });
}

Result<ConcAcquireReply> Store::ConcAcquire(int db, std::string_view key,
                                            const limiter::ConcParams& p, std::string_view token) {
  return WriteOne(*this, db, key, [&](Txn& t) { return t.ConcAcquire(db, key, p, token); });
}

Result<bool> Store::ConcRelease(int db, std::string_view key, std::string_view token) {
  return WriteOne(*this, db, key, [&](Txn& t) { return t.ConcRelease(db, key, token); });
}

Result<limiter::Decision> Store::LimitRefund(int db, std::string_view key,
                                             const limiter::LimitParams& p, int64_t units) {
  return WriteOne(*this, db, key, [&](Txn& t) { return t.LimitRefund(db, key, p, units); });
}

namespace {
std::vector<KeyRef> GroupRefs(int db, std::span<const LimitGroup> groups) {
  std::vector<KeyRef> refs;
  refs.reserve(groups.size());
  for (const LimitGroup& g : groups) refs.push_back({db, g.key});
  return refs;
}
}  // namespace

Result<LimitsReply> Store::LimitsTake(int db, std::span<const LimitGroup> groups, int64_t cost) {
  return WriteUnit(*this, GroupRefs(db, groups),
                   [&](Txn& t) { return t.LimitsTake(db, groups, cost); });
}

Result<LimitsReply> Store::LimitsRefund(int db, std::span<const LimitGroup> groups, int64_t units) {
  return WriteUnit(*this, GroupRefs(db, groups),
                   [&](Txn& t) { return t.LimitsRefund(db, groups, units); });
}

}  // namespace sluice
