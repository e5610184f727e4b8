// The keyspace: KEYS, SCAN (its server-side cursor table: engine/cursor_table.h), RANDOMKEY, DBSIZE
// and the INFO keyspace counts (from the maintained counts), their consistency check, FLUSHDB and
// FLUSHALL. The walks cover one database's prefix range.
#include <memory>

#include "sluice/glob.h"
#include "sluice/key_walk.h"
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

namespace {

// RANDOMKEY's bounds: the first seek walks this many keys (a database this small that holds
// only expired keys is walked whole, so it answers nil as Redis does), later seeks fewer.
constexpr int kRandomFirstWalk = 128;
constexpr int kRandomSeeks = 8;
constexpr int kRandomWalk = 16;

// A random raw key between first and last (slot order): their common prefix, a random next
// byte between theirs, and random bytes after.
std::string RandomTarget(const std::string& first_key, const std::string& last_key) {
  std::string target = CommonPrefix(first_key, last_key);
  const size_t n = target.size();
  if (n < last_key.size()) {
    auto lo = n < first_key.size() ? static_cast<unsigned char>(first_key[n]) : 0u;
    auto hi = static_cast<unsigned char>(last_key[n]);
    target.push_back(static_cast<char>(lo + internal::RandomU64() % (hi - lo + 1)));
    uint64_t tail = internal::RandomU64();
    target.append(reinterpret_cast<const char*>(&tail), sizeof(tail));
  }
  return target;
}

}  // namespace

// Bounded work: at most kRandomSeeks seeks to random points of the db's range, each walking a
// few keys (wrapping to the first key) for a live one. nil when the db holds no key, or when
// the first walk came all the way round finding only expired keys. When every walk found only
// expired keys, returns one of them (it is still stored and counted; Redis replicas answer the
// same way after 100 tries). Roughly, not exactly, uniform.
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
  std::optional<std::string> expired;  // a stored but expired key seen on the way
  for (int seek = 0; seek < kRandomSeeks; ++seek) {
    const std::string target = RandomTarget(first_key, last_key);
    const int budget = seek == 0 ? kRandomFirstWalk : kRandomWalk;
    bool wrapped = false;
    it->Seek(target);
    for (int step = 0; step < budget; ++step, it->Next()) {
      if (!it->Valid()) {
        if (Status s = it.status(); !s.ok()) return s;
        if (wrapped) {
          // The target was past the last key: the walk went round from the first key to the
          // end, so it too has seen every key.
          if (seek == 0) return std::optional<std::string>();
          break;
        }
        wrapped = true;
        it.SeekToFirst();
        if (!it->Valid()) break;
      }
      if (wrapped && it->key().ToStringView() >= target) {
        if (seek == 0) return std::optional<std::string>();  // every key seen: all expired
        break;
      }
      if (Live(it.value(), now)) return std::optional<std::string>(std::string(it.user_key()));
      if (!expired) expired.emplace(it.user_key());
    }
  }
  Status s = it.status();
  if (!s.ok()) return s;
  return expired;
}

// O(1): the maintained counts (keyspace_counts.h), plus what this unit has staged.
Result<KeyspaceInfo> Store::Transaction::Keyspace(int db) {
  if (Status c = ClaimAll(/*write=*/false); !c.ok()) return c;
  auto counts = txn_->CountsWithStaged(db);
  if (!counts.ok()) return counts.status();
  return KeyspaceInfo{counts->keys, counts->expires};
}

Result<int64_t> Store::Transaction::DbSize(int db) {
  auto info = Keyspace(db);
  if (!info.ok()) return info.status();
  return info->keys;
}

Result<KeyspaceCheckReport> Store::Transaction::KeyspaceCheck(int db) {
  if (Status c = ClaimAll(/*write=*/true); !c.ok()) return c;
  Store::Impl& impl = txn_->impl();
  KeyspaceCheckReport report;
  const internal::KeyCounts counted = impl.counts().Get(db);
  report.counted = KeyspaceInfo{counted.keys, counted.expires};
  std::string raw;
  const std::string_view record_key = internal::CountRecordKey(db);
  auto rs = impl.db()->Get(rocksdb::ReadOptions(), impl.meta_cf(), record_key, &raw);
  if (rs.ok()) {
    auto stored = internal::DecodeCounts(raw);
    if (!stored) return Status::Corruption("invalid keyspace count record");
    report.stored = KeyspaceInfo{stored->keys, stored->expires};
  } else if (!rs.IsNotFound()) {
    return FromRocks(rs);
  }
  const std::string lower = DbPrefix(db);
  const std::string upper = DbEnd(db);
  const rocksdb::Slice upper_slice(upper);
  rocksdb::ReadOptions ro;
  ro.iterate_upper_bound = &upper_slice;
  ro.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(impl.db()->NewIterator(ro));
  for (it->Seek(lower); it->Valid(); it->Next()) {
    auto expiry = internal::DecodeExpiry(it->value().ToStringView());
    ++report.walked.keys;
    if (expiry && *expiry != internal::kNoExpiry) ++report.walked.expires;
  }
  if (!it->status().ok()) return FromRocks(it->status());
  return report;
}

namespace {

// [db slot, db slot+1): one hash slot's keys.
std::string SlotStart(int db, uint16_t slot) {
  std::string raw = DbPrefix(db);
  raw.push_back(static_cast<char>(slot >> 8));
  raw.push_back(static_cast<char>(slot & 0xff));
  return raw;
}

std::string SlotEnd(int db, uint16_t slot) {
  return slot + 1 < 16384 ? SlotStart(db, static_cast<uint16_t>(slot + 1)) : DbEnd(db);
}

// Calls visit(user_key) for each live key of the slot until it returns false.
template <typename Visit>
Status WalkSlot(Txn& txn, int db, uint16_t slot, int64_t now, Visit visit) {
  std::unique_ptr<rocksdb::Iterator> it(txn.NewIterator(txn.impl().db()->DefaultColumnFamily(),
                                                        SlotStart(db, slot), SlotEnd(db, slot)));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    if (!Live(internal::DecodeValue(it->value().ToStringView()), now)) continue;
    if (!visit(it->key().ToStringView().substr(internal::kKeyPrefixBytes))) break;
  }
  return FromRocks(it->status());
}

}  // namespace

Result<int64_t> Store::Transaction::CountKeysInSlot(int db, uint16_t slot) {
  if (Status c = ClaimAll(/*write=*/false); !c.ok()) return c;
  int64_t n = 0;
  Status s = WalkSlot(*txn_, db, slot, NowMs(), [&](std::string_view) {
    ++n;
    return true;
  });
  if (!s.ok()) return s;
  return n;
}

Result<std::vector<std::string>> Store::Transaction::KeysInSlot(int db, uint16_t slot,
                                                                int64_t limit) {
  if (Status c = ClaimAll(/*write=*/false); !c.ok()) return c;
  std::vector<std::string> keys;
  if (limit == 0) return keys;
  Status s = WalkSlot(*txn_, db, slot, NowMs(), [&](std::string_view key) {
    keys.emplace_back(key);
    return limit < 0 || static_cast<int64_t>(keys.size()) < limit;
  });
  if (!s.ok()) return s;
  return keys;
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

Status WalkKeys(Store::Transaction& unit, int db,
                const std::function<Status(const WalkedKey&)>& visit) {
  Txn& txn = unit.txn();
  const int64_t now = txn.now_ms();
  DbIterator it(txn, db);
  WalkedKey k;
  for (it.SeekToFirst(); it->Valid(); it->Next()) {
    const std::optional<internal::EntryView> v = it.value();
    if (!v) continue;  // undecodable: no kind to encode it as
    if (IsExpired(v->expire_at_ms, now)) continue;
    k.key = it.user_key();
    k.kind = v->kind;
    k.expire_at_ms = v->expire_at_ms == internal::kNoExpiry ? 0 : v->expire_at_ms;
    k.payload = IsCollection(v->kind) ? std::string_view() : v->payload;
    if (Status s = visit(k); !s.ok()) return s;
  }
  return it.status();
}

}  // namespace sluice
