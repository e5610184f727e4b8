// Sorted sets on the collection layout (collection.h): each member has two elements, member ->
// score (8 bytes, the double's bits LE) in the `zset` column family, and [score][member] -> ""
// in `zscore`, the score encoded order-preserving (sign-flipped big-endian double), so the
// zscore range is the set in Redis's order (score, then member bytes). Both are written and
// erased together.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "collection.h"
#include "store_impl.h"
#include "txn.h"

namespace sluice {

using internal::Collection;
using internal::ElementCf;
using internal::Txn;
using ScoredMembers = Store::Transaction::ScoredMembers;
using ScoreBound = Store::Transaction::ScoreBound;

namespace {

std::string ScoreKey(double score, std::string_view member) {
  uint64_t u = std::bit_cast<uint64_t>(score);
  u = (u >> 63) != 0 ? ~u : u ^ (uint64_t{1} << 63);
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(u >> (8 * (7 - i)));
  out.append(member);
  return out;
}

double ScoreOfKey(std::string_view element) {
  uint64_t u = 0;
  for (size_t i = 0; i < 8 && i < element.size(); ++i) {
    u = (u << 8) | static_cast<unsigned char>(element[i]);
  }
  u = (u >> 63) != 0 ? u ^ (uint64_t{1} << 63) : ~u;
  return std::bit_cast<double>(u);
}

std::string EncodeScore(double score) {
  const uint64_t u = std::bit_cast<uint64_t>(score);
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(u >> (8 * i));
  return out;
}

double DecodeScore(std::string_view s) {
  uint64_t u = 0;
  for (size_t i = 0; i < 8 && i < s.size(); ++i) {
    u |= uint64_t{static_cast<unsigned char>(s[i])} << (8 * i);
  }
  return std::bit_cast<double>(u);
}

Result<Collection> OpenZSet(Txn& txn, int db, std::string_view key, bool write) {
  return Collection::Open(txn, db, key, ValueKind::kZSet, write);
}

Result<std::optional<double>> GetScore(Collection& z, std::string_view member) {
  if (!z.exists()) return std::optional<double>();
  std::string stored;
  bool found = false;
  if (Status s = z.Get(ElementCf::kZSet, member, &stored, &found); !s.ok()) return s;
  if (!found) return std::optional<double>();
  return std::optional<double>(DecodeScore(stored));
}

// Writes member at score, replacing `old` (its current score, if any).
void PutMember(Collection& z, std::string_view member, double score, std::optional<double> old) {
  if (old) z.Erase(ElementCf::kZScore, ScoreKey(*old, member));
  z.Put(ElementCf::kZSet, member, EncodeScore(score));
  z.Put(ElementCf::kZScore, ScoreKey(score, member), "");
  if (!old) z.meta().count += 1;
  if (member.size() > internal::kZsetMaxListpackValue ||
      z.meta().count > internal::kZsetMaxListpackEntries) {
    z.meta().flags |= internal::kMetaBigEncoding;
  }
}

void EraseMember(Collection& z, std::string_view member, double score) {
  z.Erase(ElementCf::kZSet, member);
  z.Erase(ElementCf::kZScore, ScoreKey(score, member));
  z.meta().count -= 1;
}

bool AboveMin(double s, ScoreBound min) { return min.exclusive ? s > min.value : s >= min.value; }
bool BelowMax(double s, ScoreBound max) { return max.exclusive ? s < max.value : s <= max.value; }

// Every member in the score range, in `rev` order, skipping offset, at most count (< 0: all).
Result<ScoredMembers> ScoreRange(Collection& z, ScoreBound min, ScoreBound max, bool rev,
                                 int64_t offset, int64_t count) {
  ScoredMembers out;
  if (!z.exists() || offset < 0) return out;
  auto it = z.NewIterator(ElementCf::kZScore);
  if (rev) {
    it->SeekToLast();
  } else {
    it->SeekToFirst();
  }
  for (; it->Valid() && count != 0; rev ? it->Prev() : it->Next()) {
    const std::string_view el = z.ElementOf(it->key());
    const double s = ScoreOfKey(el);
    if (rev ? !BelowMax(s, max) : !AboveMin(s, min)) continue;
    if (rev ? !AboveMin(s, min) : !BelowMax(s, max)) break;
    if (offset > 0) {
      --offset;
      continue;
    }
    out.emplace_back(std::string(el.substr(8)), s);
    if (count > 0) --count;
  }
  if (!it->status().ok()) return internal::FromRocks(it->status());
  return out;
}

Result<ScoredMembers> RankRange(Collection& z, int64_t start, int64_t stop, bool rev) {
  const int64_t len = z.size();
  if (start < 0) start = std::max<int64_t>(0, len + start);
  if (stop < 0) stop = len + stop;
  if (start > stop || start >= len) return ScoredMembers{};
  if (stop >= len) stop = len - 1;
  ScoreBound all_min{-INFINITY, false};
  ScoreBound all_max{INFINITY, false};
  return ScoreRange(z, all_min, all_max, rev, start, stop - start + 1);
}

Result<int64_t> RemoveAll(Collection& z, const Result<ScoredMembers>& doomed) {
  if (!doomed.ok()) return doomed.status();
  for (const auto& [member, score] : *doomed) EraseMember(z, member, score);
  if (!doomed->empty()) z.Save();
  return static_cast<int64_t>(doomed->size());
}

}  // namespace

Result<Store::Transaction::ZAddReply> Store::Transaction::ZAdd(
    int db, std::string_view key, const ZAddFlags& f,
    std::span<const std::pair<double, std::string_view>> pairs) {
  auto z = OpenZSet(*txn_, db, key, true);
  if (!z.ok()) return z.status();
  ZAddReply reply;
  if (!z->exists() && f.xx) return reply;
  z->Create();
  int64_t added = 0;
  int64_t changed = 0;
  for (const auto& [given, member] : pairs) {
    auto old = GetScore(*z, member);
    if (!old.ok()) return old.status();
    double score = given;
    if (old->has_value()) {
      if (f.nx) continue;
      if (f.incr) {
        score += **old;
        if (std::isnan(score))
          return Status::InvalidArgument("resulting score is not a number (NaN)");
      }
      if ((f.lt && score >= **old) || (f.gt && score <= **old)) continue;
      reply.score = score;
      if (score != **old) {
        PutMember(*z, member, score, *old);
        ++changed;
      }
    } else {
      if (f.xx) continue;
      reply.score = score;
      PutMember(*z, member, score, std::nullopt);
      ++added;
    }
  }
  if (added + changed > 0) z->Save();
  reply.count = f.ch ? added + changed : added;
  return reply;
}

Result<int64_t> Store::Transaction::ZRem(int db, std::string_view key,
                                         std::span<const std::string_view> members) {
  auto z = OpenZSet(*txn_, db, key, true);
  if (!z.ok()) return z.status();
  int64_t removed = 0;
  for (std::string_view m : members) {
    auto old = GetScore(*z, m);
    if (!old.ok()) return old.status();
    if (!old->has_value()) continue;
    EraseMember(*z, m, **old);
    ++removed;
  }
  if (removed > 0) z->Save();
  return removed;
}

Result<int64_t> Store::Transaction::ZCard(int db, std::string_view key) {
  auto z = OpenZSet(*txn_, db, key, false);
  if (!z.ok()) return z.status();
  return z->size();
}

Result<std::optional<double>> Store::Transaction::ZScore(int db, std::string_view key,
                                                         std::string_view member) {
  Txn::SnapshotReads one_state(*txn_);  // the metadata and the element of one moment
  auto z = OpenZSet(*txn_, db, key, false);
  if (!z.ok()) return z.status();
  return GetScore(*z, member);
}

Result<int64_t> Store::Transaction::ZCount(int db, std::string_view key, ScoreBound min,
                                           ScoreBound max) {
  auto r = ZRangeByScore(db, key, min, max, false, 0, -1);
  if (!r.ok()) return r.status();
  return static_cast<int64_t>(r->size());
}

Result<ScoredMembers> Store::Transaction::ZRangeByRank(int db, std::string_view key, int64_t start,
                                                       int64_t stop, bool rev) {
  Txn::SnapshotReads one_state(*txn_);  // the metadata and elements of one moment
  auto z = OpenZSet(*txn_, db, key, false);
  if (!z.ok()) return z.status();
  return RankRange(*z, start, stop, rev);
}

Result<ScoredMembers> Store::Transaction::ZRangeByScore(int db, std::string_view key,
                                                        ScoreBound min, ScoreBound max, bool rev,
                                                        int64_t offset, int64_t count) {
  Txn::SnapshotReads one_state(*txn_);  // the metadata and elements of one moment
  auto z = OpenZSet(*txn_, db, key, false);
  if (!z.ok()) return z.status();
  return ScoreRange(*z, min, max, rev, offset, count);
}

Result<int64_t> Store::Transaction::ZRemRangeByRank(int db, std::string_view key, int64_t start,
                                                    int64_t stop) {
  auto z = OpenZSet(*txn_, db, key, true);
  if (!z.ok()) return z.status();
  return RemoveAll(*z, RankRange(*z, start, stop, false));
}

Result<int64_t> Store::Transaction::ZRemRangeByScore(int db, std::string_view key, ScoreBound min,
                                                     ScoreBound max) {
  auto z = OpenZSet(*txn_, db, key, true);
  if (!z.ok()) return z.status();
  return RemoveAll(*z, ScoreRange(*z, min, max, false, 0, -1));
}

}  // namespace sluice
