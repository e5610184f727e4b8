// Keyspace walks: KEYS, SCAN (with its server-side cursor table), RANDOMKEY, DBSIZE, the
// INFO keyspace counts, FLUSHDB and FLUSHALL. Each walks one database's prefix range.
#include <memory>

#include "sluice/glob.h"
#include "store_impl.h"
#include "txn.h"

namespace sluice {

using internal::DbEnd;
using internal::DbPrefix;
using internal::EncodeKey;
using internal::FromRocks;
using internal::IsExpired;
using internal::Txn;

namespace {

// An iterator confined to one database's key range [db, db + 1), in both directions (without
// the lower bound, SeekToLast on an empty db would land on the last key of a lower db), over
// the unit's own writes merged with what is stored.
class DbIterator {
 public:
  DbIterator(Txn& txn, int db)
      : it_(txn.NewIterator(txn.impl().db()->DefaultColumnFamily(), DbPrefix(db), DbEnd(db))) {}
  rocksdb::Iterator* operator->() { return it_.get(); }
  void SeekToFirst() { it_->SeekToFirst(); }
  // Positions at the first key strictly after user_key.
  void SeekAfter(std::string_view user_key, int db) {
    const std::string raw = EncodeKey(db, user_key);
    it_->Seek(raw);
    if (it_->Valid() && it_->key() == raw) it_->Next();
  }
  std::string_view user_key() const {
    return it_->key().ToStringView().substr(internal::kKeyPrefixBytes);
  }
  // The entry's header, or nullopt when undecodable (treated as live: never hide data).
  std::optional<internal::EntryView> value() const {
    return internal::DecodeValue(it_->value().ToStringView());
  }
  Status status() const { return FromRocks(it_->status()); }

 private:
  std::unique_ptr<rocksdb::Iterator> it_;
};

bool Live(const std::optional<internal::EntryView>& v, int64_t now_ms) {
  return !v || !IsExpired(v->expire_at_ms, now_ms);
}

// Redis treats the pattern "*" as "everything" without matching.
bool Matches(std::optional<std::string_view> pattern, std::string_view key) {
  if (!pattern || *pattern == "*") return true;
  return GlobMatch(*pattern, key);
}

bool TypeMatches(std::optional<std::string_view> type,
                 const std::optional<internal::EntryView>& v) {
  if (!type) return true;
  return v && *type == TypeName(v->kind);
}

std::string CommonPrefix(std::string_view a, std::string_view b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return std::string(a.substr(0, n));
}

}  // namespace

namespace internal {

uint64_t CursorTable::Add(Position pos) {
  std::lock_guard<std::mutex> l(mu_);
  uint64_t id = 0;
  do {
    id = (RandomU64() ^ ++next_salt_) & ((uint64_t{1} << 63) - 1);
  } while (id == 0 || by_id_.count(id) != 0);
  by_id_.emplace(id, std::move(pos));
  order_.push_back(id);
  while (order_.size() > kCapacity) {
    by_id_.erase(order_.front());
    order_.pop_front();
  }
  return id;
}

std::optional<CursorTable::Position> CursorTable::Find(uint64_t id) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = by_id_.find(id);
  if (it == by_id_.end()) return std::nullopt;
  return it->second;
}

}  // namespace internal

Result<std::vector<std::string>> Store::Transaction::Keys(int db, std::string_view pattern) {
  if (Status c = ClaimAll(/*write=*/false); !c.ok()) return c;
  const int64_t now = NowMs();
  // Keys are ordered by slot first, so a literal prefix of the pattern does not bound the walk.
  const std::string_view literal = GlobLiteralPrefix(pattern);
  DbIterator it(*txn_, db);
  std::vector<std::string> keys;
  for (it.SeekToFirst(); it->Valid(); it->Next()) {
    std::string_view key = it.user_key();
    if (key.substr(0, literal.size()) != literal) continue;
    if (Live(it.value(), now) && Matches(pattern, key)) keys.emplace_back(key);
  }
  Status s = it.status();
  if (!s.ok()) return s;
  return keys;
}

// Cursor ids map to the last key a page returned (CursorTable). An unknown id (evicted, from
// before a restart, or made up) restarts the iteration from the beginning, so a client always
// terminates and sees every key that existed throughout at least once.
Result<ScanPage> Store::Transaction::Scan(int db, uint64_t cursor,
                                          std::optional<std::string_view> match, int64_t count,
                                          std::optional<std::string_view> type) {
  if (Status c = ClaimAll(/*write=*/false); !c.ok()) return c;
  const int64_t now = NowMs();
  DbIterator it(*txn_, db);
  std::optional<internal::CursorTable::Position> pos;
  if (cursor != 0) pos = txn_->impl().cursors().Find(cursor);
  if (pos && pos->db == db && pos->owner.empty()) {
    it.SeekAfter(pos->last_key, db);
  } else {
    it.SeekToFirst();
  }
  ScanPage page;
  std::string last;
  for (int64_t examined = 0; it->Valid() && examined < std::max<int64_t>(count, 1);
       ++examined, it->Next()) {
    std::string_view key = it.user_key();
    last.assign(key);
    auto v = it.value();
    if (Live(v, now) && Matches(match, key) && TypeMatches(type, v)) page.keys.emplace_back(key);
  }
  Status s = it.status();
  if (!s.ok()) return s;
  if (it->Valid()) page.next_cursor = txn_->impl().cursors().Add({db, std::move(last), {}});
  return page;
}

// Seeks to a random point between the db's first and last keys, then takes the first live key
// from there (wrapping around once). Roughly uniform for evenly spread keys.
Result<std::optional<std::string>> Store::Transaction::RandomKey(int db) {
  if (Status c = ClaimAll(/*write=*/false); !c.ok()) return c;
  const int64_t now = NowMs();
  DbIterator it(*txn_, db);
  it->SeekToLast();
  if (!it->Valid()) {
    Status s = it.status();
    if (!s.ok()) return s;
    return std::optional<std::string>();
  }
  // Raw keys (slot first): the random target is a point in the db's stored order.
  const std::string last_key(it->key().ToStringView());
  it.SeekToFirst();
  if (!it->Valid()) {  // cannot happen on the iterator's snapshot; never read an invalid key()
    Status s = it.status();
    if (!s.ok()) return s;
    return std::optional<std::string>();
  }
  const std::string first_key(it->key().ToStringView());
  std::string target = CommonPrefix(first_key, last_key);
  const size_t n = target.size();
  if (n < last_key.size()) {
    auto lo = n < first_key.size() ? static_cast<unsigned char>(first_key[n]) : 0u;
    auto hi = static_cast<unsigned char>(last_key[n]);
    target.push_back(static_cast<char>(lo + internal::RandomU64() % (hi - lo + 1)));
    uint64_t tail = internal::RandomU64();
    target.append(reinterpret_cast<const char*>(&tail), sizeof(tail));
  }
  it->Seek(target);
  for (int pass = 0; pass < 2; ++pass) {
    if (pass == 1) it.SeekToFirst();
    for (; it->Valid(); it->Next()) {
      if (pass == 1 && it->key().ToStringView() >= target) break;  // wrapped all the way round
      if (Live(it.value(), now)) return std::optional<std::string>(std::string(it.user_key()));
    }
  }
  Status s = it.status();
  if (!s.ok()) return s;
  return std::optional<std::string>();
}

// O(N) in the db's keys (expired ones are read too): RocksDB keeps no exact count.
Result<KeyspaceInfo> Store::Transaction::Keyspace(int db) {
  if (Status c = ClaimAll(/*write=*/false); !c.ok()) return c;
  const int64_t now = NowMs();
  DbIterator it(*txn_, db);
  KeyspaceInfo info;
  for (it.SeekToFirst(); it->Valid(); it->Next()) {
    auto v = it.value();
    if (!Live(v, now)) continue;
    ++info.keys;
    if (v && v->expire_at_ms != internal::kNoExpiry) ++info.expires;
  }
  Status s = it.status();
  if (!s.ok()) return s;
  return info;
}

Result<int64_t> Store::Transaction::DbSize(int db) {
  auto info = Keyspace(db);
  if (!info.ok()) return info.status();
  return info->keys;
}

// Both need every stripe, so no read-modify-write straddles the flush.
Status Store::Transaction::FlushDb(int db) {
  if (Status c = ClaimAll(/*write=*/true); !c.ok()) return c;
  txn_->DeleteDb(db);
  return Status::Ok();
}

Status Store::Transaction::FlushAll() {
  if (Status c = ClaimAll(/*write=*/true); !c.ok()) return c;
  for (int db = 0; db < kNumDatabases; ++db) txn_->DeleteDb(db);
  return Status::Ok();
}

}  // namespace sluice
