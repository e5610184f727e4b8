// Sets on the collection layout (collection.h): one element per member in the `set` column
// family, with an empty value. A set stays an "intset" (Redis's small encoding: every member an
// integer, at most 512) until a member breaks that; then it is a "hashtable" for good.
#include <algorithm>
#include <limits>
#include <set>

#include "collection.h"
#include "numeric.h"
#include "sluice/encoding_limits.h"
#include "sluice/glob.h"
#include "store_impl.h"
#include "txn.h"

namespace sluice {

using internal::Collection;
using internal::ElementCf;
using internal::RawKey;
using internal::Txn;
using Members = std::vector<std::string>;
using SetOp = Store::Transaction::SetOp;

namespace {

Result<Collection> OpenSet(Txn& txn, int db, std::string_view key, bool write) {
  return Collection::Open(txn, db, key, ValueKind::kSet, write);
}

bool IsIntset(const Collection& s) { return (s.meta().flags & internal::kMetaBigEncoding) == 0; }

// Redis converts an intset on a member that is not an integer, or past set-max-intset-entries
// members (sluice/encoding_limits.h).
void NoteMember(Collection& s, std::string_view member) {
  if (!internal::ParseInt64(member)) s.meta().flags |= internal::kMetaBigEncoding;
}
void NoteCount(Collection& s) {
  if (s.meta().count > GetEncodingLimits().set_max_intset_entries) {
    s.meta().flags |= internal::kMetaBigEncoding;
  }
}

Result<bool> Contains(Collection& s, std::string_view member) {
  if (!s.exists()) return false;
  std::string unused;
  bool found = false;
  if (Status st = s.Get(ElementCf::kSet, member, &unused, &found); !st.ok()) return st;
  return found;
}

// Adds one member to an existing (or Created) set; true when it was new.
Result<bool> AddMember(Collection& s, std::string_view member) {
  auto has = Contains(s, member);
  if (!has.ok() || *has) return has.ok() ? Result<bool>(false) : has;
  NoteMember(s, member);
  s.Put(ElementCf::kSet, member, {});
  s.meta().count += 1;
  NoteCount(s);
  return true;
}

// Every member: numeric order for an intset (as Redis keeps it), else element order.
Result<Members> AllMembers(Collection& s) {
  Members out;
  if (!s.exists()) return out;
  auto it = s.NewIterator(ElementCf::kSet);
  for (it->SeekToFirst(); it->Valid(); it->Next()) out.emplace_back(s.ElementOf(it->key()));
  if (!it->status().ok()) return internal::FromRocks(it->status());
  if (IsIntset(s)) {
    std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) {
      return *internal::ParseInt64(a) < *internal::ParseInt64(b);
    });
  }
  return out;
}

// Writes `members` as a new set at dst (replacing what is there), or deletes dst when empty.
void StoreMembers(Txn& txn, int db, std::string_view dst, const Members& members) {
  Collection out = Collection::NewAt(txn, db, dst, ValueKind::kSet);
  for (const auto& m : members) {
    NoteMember(out, m);
    out.Put(ElementCf::kSet, m, {});
  }
  out.meta().count = static_cast<int64_t>(members.size());
  NoteCount(out);
  out.Save();
}

// `count` distinct random picks (all when count >= size), or -count picks with repeats.
Members Pick(Members all, int64_t count) {
  Members out;
  if (all.empty() || count == 0) return out;
  if (count < 0) {
    const uint64_t n = count == std::numeric_limits<int64_t>::min() ? uint64_t{1} << 63
                                                                    : static_cast<uint64_t>(-count);
    out.reserve(static_cast<size_t>(std::min<uint64_t>(n, 1 << 20)));
    for (uint64_t i = 0; i < n; ++i) out.push_back(all[internal::RandomU64() % all.size()]);
    return out;
  }
  if (static_cast<uint64_t>(count) >= all.size()) return all;
  for (size_t i = 0; i < static_cast<size_t>(count); ++i) {
    const size_t j = i + internal::RandomU64() % (all.size() - i);
    std::swap(all[i], all[j]);
  }
  all.resize(static_cast<size_t>(count));
  return all;
}

// Sets at least this big pick a single random member by seeking instead of reading them all.
constexpr int64_t kSeekPickMin = 64;
// A negative count's reply holds -count picks: refused beyond this (it would not fit in memory).
constexpr int64_t kMaxRepeatedPicks = int64_t{1} << 26;

// `count` picks as Pick() makes them; a single pick from a big set seeks (SeekRandomElement).
Result<Members> PickFrom(Collection& s, int64_t count) {
  if (count < -kMaxRepeatedPicks) return Status::InvalidArgument("count too large");
  if (count == 1 && s.size() >= kSeekPickMin) {
    auto m = internal::SeekRandomElement(s, ElementCf::kSet);
    if (!m.ok()) return m.status();
    return Members{std::move(m->first)};
  }
  auto all = AllMembers(s);
  if (!all.ok()) return all.status();
  return Pick(std::move(*all), count);
}

}  // namespace

Result<int64_t> Store::Transaction::SAdd(int db, std::string_view key,
                                         std::span<const std::string_view> members) {
  auto s = OpenSet(*txn_, db, key, true);
  if (!s.ok()) return s.status();
  s->Create();
  int64_t added = 0;
  for (std::string_view m : members) {
    auto isnew = AddMember(*s, m);
    if (!isnew.ok()) return isnew.status();
    added += *isnew ? 1 : 0;
  }
  if (added > 0) s->Save();
  return added;
}

Result<int64_t> Store::Transaction::SRem(int db, std::string_view key,
                                         std::span<const std::string_view> members) {
  auto s = OpenSet(*txn_, db, key, true);
  if (!s.ok()) return s.status();
  int64_t removed = 0;
  for (std::string_view m : members) {
    auto has = Contains(*s, m);
    if (!has.ok()) return has.status();
    if (!*has) continue;
    s->Erase(ElementCf::kSet, m);
    s->meta().count -= 1;
    ++removed;
  }
  if (removed > 0) s->Save();
  return removed;
}

Result<bool> Store::Transaction::SIsMember(int db, std::string_view key, std::string_view member) {
  auto s = OpenSet(*txn_, db, key, false);
  if (!s.ok()) return s.status();
  return Contains(*s, member);
}

Result<std::vector<bool>> Store::Transaction::SMIsMember(
    int db, std::string_view key, std::span<const std::string_view> members) {
  // The metadata and elements of one moment.
  Txn::SnapshotReads one_state(*txn_, Txn::SnapshotReads::OneKey{});
  auto s = OpenSet(*txn_, db, key, false);
  if (!s.ok()) return s.status();
  std::vector<bool> out;
  for (std::string_view m : members) {
    auto has = Contains(*s, m);
    if (!has.ok()) return has.status();
    out.push_back(*has);
  }
  return out;
}

Result<Members> Store::Transaction::SMembers(int db, std::string_view key) {
  // The metadata and elements of one moment.
  Txn::SnapshotReads one_state(*txn_, Txn::SnapshotReads::OneKey{});
  auto s = OpenSet(*txn_, db, key, false);
  if (!s.ok()) return s.status();
  return AllMembers(*s);
}

Result<int64_t> Store::Transaction::SCard(int db, std::string_view key) {
  auto s = OpenSet(*txn_, db, key, false);
  if (!s.ok()) return s.status();
  return s->size();
}

Result<Members> Store::Transaction::SPop(int db, std::string_view key, int64_t count) {
  auto s = OpenSet(*txn_, db, key, true);
  if (!s.ok()) return s.status();
  if (!s->exists() || count <= 0) return Members{};
  auto pick = PickFrom(*s, count);
  if (!pick.ok()) return pick.status();
  Members picked = std::move(*pick);
  for (const auto& m : picked) s->Erase(ElementCf::kSet, m);
  s->meta().count -= static_cast<int64_t>(picked.size());
  s->Save();
  return picked;
}

Result<Members> Store::Transaction::SRandMember(int db, std::string_view key, int64_t count) {
  // The metadata and elements of one moment.
  Txn::SnapshotReads one_state(*txn_, Txn::SnapshotReads::OneKey{});
  auto s = OpenSet(*txn_, db, key, false);
  if (!s.ok()) return s.status();
  if (!s->exists()) return Members{};
  return PickFrom(*s, count);
}

Result<bool> Store::Transaction::SMove(int db, std::string_view src, std::string_view dst,
                                       std::string_view member) {
  // Redis's order: a missing source is 0 whatever the destination holds; then the types.
  auto from = OpenSet(*txn_, db, src, true);
  if (from.ok() && !from->exists()) return false;
  if (!from.ok()) return from.status();
  auto to = OpenSet(*txn_, db, dst, true);
  if (!to.ok()) return to.status();
  auto has = Contains(*from, member);
  if (!has.ok() || !*has) return has;
  if (src == dst) return true;  // Redis: a member of the set, nothing changes
  from->Erase(ElementCf::kSet, member);
  from->meta().count -= 1;
  from->Save();
  to->Create();
  auto added = AddMember(*to, member);
  if (!added.ok()) return added.status();
  if (*added) to->Save();
  return true;
}

namespace {

// The sets named by keys, in order; a missing key is nullopt (and sets *missing). Every key's
// type is checked first, as Redis 7.0 does for all of SINTER/SUNION/SDIFF.
Result<std::vector<std::optional<Collection>>> OpenAll(Txn& txn, int db,
                                                       std::span<const std::string_view> keys,
                                                       bool* missing) {
  std::vector<std::optional<Collection>> sets;
  *missing = false;
  for (std::string_view k : keys) {
    auto s = OpenSet(txn, db, k, false);
    if (!s.ok()) return s.status();
    if (!s->exists()) {
      *missing = true;
      sets.emplace_back();
      continue;
    }
    sets.emplace_back(std::move(*s));
  }
  return sets;
}

// The intersection (smallest set first, each candidate checked in the others), stopping at
// limit members when limit > 0. Every set exists (no nullopt in sets).
Result<Members> Intersect(std::vector<std::optional<Collection>>& sets, int64_t limit) {
  std::vector<Collection*> order;
  order.reserve(sets.size());
  for (auto& s : sets) order.push_back(&*s);
  std::sort(order.begin(), order.end(),
            [](const Collection* a, const Collection* b) { return a->size() < b->size(); });
  auto first = AllMembers(*order[0]);
  if (!first.ok()) return first.status();
  Members out;
  for (const auto& m : *first) {
    bool everywhere = true;
    for (size_t i = 1; i < order.size() && everywhere; ++i) {
      auto has = Contains(*order[i], m);
      if (!has.ok()) return has.status();
      everywhere = *has;
    }
    if (!everywhere) continue;
    out.push_back(m);
    if (limit > 0 && static_cast<int64_t>(out.size()) >= limit) break;
  }
  return out;
}

Result<Members> Combine(Txn& txn, int db, SetOp op, std::span<const std::string_view> keys,
                        int64_t limit) {
  bool missing = false;
  auto sets = OpenAll(txn, db, keys, &missing);
  if (!sets.ok()) return sets.status();
  if (op == SetOp::kInter) {
    if (missing || sets->empty()) return Members{};
    return Intersect(*sets, limit);
  }
  std::set<std::string> acc;
  for (size_t i = 0; i < sets->size(); ++i) {
    auto& s = (*sets)[i];
    if (!s) continue;
    if (op == SetOp::kDiff && i > 0 && acc.empty()) break;  // nothing left to remove from
    auto members = AllMembers(*s);
    if (!members.ok()) return members.status();
    if (op == SetOp::kUnion || i == 0) {
      acc.insert(members->begin(), members->end());
    } else {
      for (const auto& m : *members) acc.erase(m);
    }
  }
  return Members(acc.begin(), acc.end());
}

}  // namespace

Result<Members> Store::Transaction::SetAlgebra(int db, SetOp op,
                                               std::span<const std::string_view> keys) {
  Txn::SnapshotReads one_state(*txn_);  // the metadata and elements of one moment
  return Combine(*txn_, db, op, keys, 0);
}

Result<int64_t> Store::Transaction::SetAlgebraStore(int db, SetOp op, std::string_view dst,
                                                    std::span<const std::string_view> keys) {
  auto members = Combine(*txn_, db, op, keys, 0);
  if (!members.ok()) return members.status();
  const RawKey raw(db, dst);
  if (Status c = txn_->ClaimWrite(raw); !c.ok()) return c;
  StoreMembers(*txn_, db, dst, *members);
  return static_cast<int64_t>(members->size());
}

Result<int64_t> Store::Transaction::SInterCard(int db, std::span<const std::string_view> keys,
                                               int64_t limit) {
  Txn::SnapshotReads one_state(*txn_);  // the metadata and elements of one moment
  auto members = Combine(*txn_, db, SetOp::kInter, keys, limit);
  if (!members.ok()) return members.status();
  return static_cast<int64_t>(members->size());
}

Result<ElementScanReply> Store::Transaction::SScan(int db, std::string_view key, uint64_t cursor,
                                                   std::optional<std::string_view> match,
                                                   int64_t count) {
  // The metadata and elements of one moment.
  Txn::SnapshotReads one_state(*txn_, Txn::SnapshotReads::OneKey{});
  auto s = OpenSet(*txn_, db, key, false);
  if (!s.ok()) return s.status();
  ElementScanReply reply;
  if (!s->exists()) return reply;
  if (IsIntset(*s)) {
    auto all = AllMembers(*s);
    if (!all.ok()) return all.status();
    for (auto& m : *all) {
      if (!match || *match == "*" || GlobMatch(*match, m)) reply.items.emplace_back(m, "");
    }
    return reply;
  }
  auto page = internal::ScanElements(*s, ElementCf::kSet, cursor, match, count);
  if (!page.ok()) return page.status();
  reply.next_cursor = page->next_cursor;
  reply.items = std::move(page->items);
  return reply;
}

}  // namespace sluice
