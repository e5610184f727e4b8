// Sorted set lex ranges (ZLEXCOUNT, ZRANGEBYLEX, ZREMRANGEBYLEX), ranks (ZRANK, ZREVRANK),
// ZMSCORE, and ZRANGE's three ranges behind one query (ZRANGESTORE).
//
// Lex ranges follow Redis's walk over the set in its order (score, then member): empty when the
// bounds cross, when the last member is below min or the first above max; otherwise from the
// first member >= min (rev: the last <= max), which must itself be <= max (rev: >= min), on
// while members stay within the other bound. When the first and last member have one score (the
// only case Redis defines), the zscore elements of the set are in member order, so the walk
// seeks to [score][bound member] instead of scanning from an end.
#include <cmath>

#include "collection.h"
#include "store_impl.h"
#include "txn.h"
#include "zset_elements.h"

namespace sluice {

using internal::Collection;
using internal::ElementCf;
using internal::Txn;
using LexBound = Store::Transaction::LexBound;
using Kind = LexBound::Kind;
using ScoredMembers = Store::Transaction::ScoredMembers;
using ZRangeQuery = Store::Transaction::ZRangeQuery;

namespace {

// Redis's sdscmplex of a member against a bound: "-" is below and "+" above every member.
int CompareToBound(std::string_view member, const LexBound& b) {
  if (b.kind == Kind::kMin) return 1;
  if (b.kind == Kind::kMax) return -1;
  const int c = member.compare(b.member);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

bool GteMin(std::string_view m, const LexBound& min) {
  const int c = CompareToBound(m, min);
  return min.exclusive ? c > 0 : c >= 0;
}

bool LteMax(std::string_view m, const LexBound& max) {
  const int c = CompareToBound(m, max);
  return max.exclusive ? c < 0 : c <= 0;
}

// Ranges Redis answers empty before looking at the set: crossed bounds, or equal bounds either
// of which is exclusive ("-" and "+" count as exclusive).
bool LexRangeEmpty(const LexBound& min, const LexBound& max) {
  int cmp = 0;
  if (min.kind == max.kind && min.kind != Kind::kMember) {
    cmp = 0;
  } else if (min.kind == Kind::kMin || max.kind == Kind::kMax) {
    cmp = -1;
  } else if (min.kind == Kind::kMax || max.kind == Kind::kMin) {
    cmp = 1;
  } else {
    const int c = min.member.compare(max.member);
    cmp = c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  const bool min_ex = min.exclusive || min.kind != Kind::kMember;
  const bool max_ex = max.exclusive || max.kind != Kind::kMember;
  return cmp > 0 || (cmp == 0 && (min_ex || max_ex));
}

// Redis's lex walk (see the top of the file): skips `offset` members from the start (< 0: the
// walk yields nothing), then yields at most `count` (< 0: no limit) in-range members.
Result<ScoredMembers> LexWalk(Collection& z, const LexBound& min, const LexBound& max, bool rev,
                              int64_t offset, int64_t count) {
  ScoredMembers out;
  if (!z.exists() || offset < 0 || LexRangeEmpty(min, max)) return out;
  auto it = internal::NewZScoreIterator(z);
  it->SeekToLast();
  if (!it->Valid()) return internal::FromRocks(it->status());
  const std::string last(z.ElementOf(it->key()));
  it->SeekToFirst();
  if (!it->Valid()) return internal::FromRocks(it->status());
  const std::string_view first = z.ElementOf(it->key());
  if (!GteMin(std::string_view(last).substr(8), min) || !LteMax(first.substr(8), max)) return out;
  const bool one_score = first.substr(0, 8) == std::string_view(last).substr(0, 8);
  const LexBound& from = rev ? max : min;
  if (one_score && from.kind == Kind::kMember) {
    const std::string target = z.SubKey(last.substr(0, 8) + from.member);
    rev ? it->SeekForPrev(target) : it->Seek(target);
  } else if (rev) {
    it->SeekToLast();
  }
  auto advance = [&] { rev ? it->Prev() : it->Next(); };
  auto member = [&] { return z.ElementOf(it->key()).substr(8); };
  while (it->Valid() && !(rev ? LteMax(member(), max) : GteMin(member(), min))) advance();
  if (it->Valid() && !(rev ? GteMin(member(), min) : LteMax(member(), max))) return out;
  for (; it->Valid() && offset > 0; --offset) advance();
  for (; it->Valid() && count != 0; advance()) {
    const std::string_view m = member();
    if (rev ? !GteMin(m, min) : !LteMax(m, max)) break;
    out.emplace_back(std::string(m),
                     internal::ZScoreOfEntry(z.ElementOf(it->key()), it->value().ToStringView()));
    if (count > 0) --count;
  }
  if (!it->status().ok()) return internal::FromRocks(it->status());
  return out;
}

Result<ScoredMembers> RangeOf(Collection& z, const ZRangeQuery& q) {
  switch (q.by) {
    case ZRangeQuery::By::kRank:
      return internal::ZRankRange(z, q.start, q.stop, q.rev);
    case ZRangeQuery::By::kScore:
      return internal::ZScoreRange(z, q.score_min, q.score_max, q.rev, q.offset, q.count);
    case ZRangeQuery::By::kLex:
      break;
  }
  return LexWalk(z, q.lex_min, q.lex_max, q.rev, q.offset, q.count);
}

}  // namespace

Result<int64_t> Store::Transaction::ZLexCount(int db, std::string_view key, const LexBound& min,
                                              const LexBound& max) {
  auto r = ZRangeByLex(db, key, min, max, false, 0, -1);
  if (!r.ok()) return r.status();
  return static_cast<int64_t>(r->size());
}

Result<ScoredMembers> Store::Transaction::ZRangeByLex(int db, std::string_view key,
                                                      const LexBound& min, const LexBound& max,
                                                      bool rev, int64_t offset, int64_t count) {
  // The metadata and elements of one moment.
  Txn::SnapshotReads one_state(*txn_, Txn::SnapshotReads::OneKey{});
  auto z = internal::OpenZSet(*txn_, db, key, false);
  if (!z.ok()) return z.status();
  return LexWalk(*z, min, max, rev, offset, count);
}

Result<int64_t> Store::Transaction::ZRemRangeByLex(int db, std::string_view key,
                                                   const LexBound& min, const LexBound& max) {
  auto z = internal::OpenZSet(*txn_, db, key, true);
  if (!z.ok()) return z.status();
  auto doomed = LexWalk(*z, min, max, false, 0, -1);
  if (!doomed.ok()) return doomed.status();
  for (const auto& [member, score] : *doomed) {
    if (Status s = internal::EraseZMember(*z, member, score); !s.ok()) return s;
  }
  if (!doomed->empty()) {
    if (Status s = internal::SaveZSet(*z); !s.ok()) return s;
  }
  return static_cast<int64_t>(doomed->size());
}

Result<std::optional<int64_t>> Store::Transaction::ZRank(int db, std::string_view key,
                                                         std::string_view member, bool rev) {
  // The metadata and elements of one moment.
  Txn::SnapshotReads one_state(*txn_, Txn::SnapshotReads::OneKey{});
  auto z = internal::OpenZSet(*txn_, db, key, false);
  if (!z.ok()) return z.status();
  auto score = internal::GetZScore(*z, member);
  if (!score.ok()) return score.status();
  if (!score->has_value()) return std::optional<int64_t>();
  const std::string target = internal::ZScoreKey(**score, member);
  auto it = internal::NewZScoreIterator(*z);
  int64_t rank = 0;
  for (rev ? it->SeekToLast() : it->SeekToFirst(); it->Valid(); rev ? it->Prev() : it->Next()) {
    if (z->ElementOf(it->key()) == target) return std::optional<int64_t>(rank);
    ++rank;
  }
  if (!it->status().ok()) return internal::FromRocks(it->status());
  return Status::Corruption("sorted set member without its score element");
}

Result<std::vector<std::optional<double>>> Store::Transaction::ZMScore(
    int db, std::string_view key, std::span<const std::string_view> members) {
  // The metadata and elements of one moment.
  Txn::SnapshotReads one_state(*txn_, Txn::SnapshotReads::OneKey{});
  auto z = internal::OpenZSet(*txn_, db, key, false);
  if (!z.ok()) return z.status();
  std::vector<std::optional<double>> out;
  out.reserve(members.size());
  for (std::string_view m : members) {
    auto s = internal::GetZScore(*z, m);
    if (!s.ok()) return s.status();
    out.push_back(*s);
  }
  return out;
}

Result<ScoredMembers> Store::Transaction::ZRange(int db, std::string_view key,
                                                 const ZRangeQuery& q) {
  // The metadata and elements of one moment.
  Txn::SnapshotReads one_state(*txn_, Txn::SnapshotReads::OneKey{});
  auto z = internal::OpenZSet(*txn_, db, key, false);
  if (!z.ok()) return z.status();
  return RangeOf(*z, q);
}

Result<int64_t> Store::Transaction::ZRangeStore(int db, std::string_view dst, std::string_view src,
                                                const ZRangeQuery& q) {
  auto z = internal::OpenZSet(*txn_, db, src, false);
  if (!z.ok()) return z.status();
  auto range = RangeOf(*z, q);
  if (!range.ok()) return range.status();
  if (Status c = ClaimWrite(db, dst); !c.ok()) return c;
  Collection out = Collection::NewAt(*txn_, db, dst, ValueKind::kZSet);
  out.StartInline();
  for (const auto& [member, score] : *range) {
    if (Status s = internal::PutZMember(out, member, score, std::nullopt); !s.ok()) return s;
  }
  if (Status s = internal::SaveZSet(out); !s.ok()) return s;
  return static_cast<int64_t>(range->size());
}

}  // namespace sluice
