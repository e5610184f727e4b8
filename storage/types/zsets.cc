// Sorted sets on the collection layout (collection.h, zset_elements.h): the element helpers,
// ZADD/ZINCRBY, ZREM, ZCARD, ZSCORE, ZCOUNT, rank and score ranges and their removals.
// zset_ranges.cc has lex ranges, ranks and ZRANGESTORE; zset_pops.cc pops, random picks and
// ZSCAN; zset_algebra.cc ZUNION/ZINTER/ZDIFF.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "collection.h"
#include "sluice/encoding_limits.h"
#include "store_impl.h"
#include "txn.h"
#include "zset_elements.h"

namespace sluice {

using internal::Collection;
using internal::ElementCf;
using internal::Txn;
using ScoredMembers = Store::Transaction::ScoredMembers;
using ScoreBound = Store::Transaction::ScoreBound;

namespace internal {

std::string ZScoreKey(double score, std::string_view member) {
  // -0 orders as 0 (then by member), as Redis's skiplist compares scores; its sign is kept in
  // the element's value (ZScoreValue).
  if (score == 0) score = 0;
  uint64_t u = std::bit_cast<uint64_t>(score);
  u = (u >> 63) != 0 ? ~u : u ^ (uint64_t{1} << 63);
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(u >> (8 * (7 - i)));
  out.append(member);
  return out;
}

double ZScoreOfKey(std::string_view element) {
  uint64_t u = 0;
  for (size_t i = 0; i < 8 && i < element.size(); ++i) {
    u = (u << 8) | static_cast<unsigned char>(element[i]);
  }
  u = (u >> 63) != 0 ? u ^ (uint64_t{1} << 63) : ~u;
  return std::bit_cast<double>(u);
}

std::string_view ZScoreValue(double score) { return std::signbit(score) && score == 0 ? "-" : ""; }

double ZScoreOfEntry(std::string_view element, std::string_view value) {
  const double s = ZScoreOfKey(element);
  return s == 0 && value == "-" ? -0.0 : s;
}

std::string EncodeZScore(double score) {
  const uint64_t u = std::bit_cast<uint64_t>(score);
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(u >> (8 * i));
  return out;
}

double DecodeZScore(std::string_view s) {
  uint64_t u = 0;
  for (size_t i = 0; i < 8 && i < s.size(); ++i) {
    u |= uint64_t{static_cast<unsigned char>(s[i])} << (8 * i);
  }
  return std::bit_cast<double>(u);
}

Result<Collection> OpenZSet(Txn& txn, int db, std::string_view key, bool write) {
  return Collection::Open(txn, db, key, ValueKind::kZSet, write);
}

Result<std::optional<double>> GetZScore(Collection& z, std::string_view member) {
  if (!z.exists()) return std::optional<double>();
  std::string stored;
  bool found = false;
  if (Status s = z.Get(ElementCf::kZSet, member, &stored, &found); !s.ok()) return s;
  if (!found) return std::optional<double>();
  return std::optional<double>(DecodeZScore(stored));
}

namespace {
// Erases the zscore element of (score, member). A -0 written before -0 ordered as 0 sits under
// -0's own order bytes: erase that one too.
Status EraseZScoreElement(Collection& z, double score, std::string_view member) {
  const std::string element = ZScoreKey(score, member);
  z.EraseOnce(ElementCf::kZScore, element);
  if (Status s = ZHeadErase(z, element); !s.ok()) return s;
  if (score == 0 && std::signbit(score)) {
    std::string legacy = element;
    const uint64_t minus_zero = ~std::bit_cast<uint64_t>(-0.0);
    for (int i = 0; i < 8; ++i) legacy[i] = static_cast<char>(minus_zero >> (8 * (7 - i)));
    z.Erase(ElementCf::kZScore, legacy);
    return ZHeadErase(z, legacy);
  }
  return Status::Ok();
}
}  // namespace

Status PutZMember(Collection& z, std::string_view member, double score, std::optional<double> old) {
  if (!old) z.meta().count += 1;
  const EncodingLimits limits = GetEncodingLimits();  // sluice/encoding_limits.h
  if (member.size() > static_cast<size_t>(limits.zset_max_listpack_value) ||
      z.meta().count > limits.zset_max_listpack_entries) {
    z.meta().flags |= kMetaBigEncoding;
  }
  // Redis's listpack keeps a score as text that reads back -0 as 0; its skiplist keeps -0.
  if (score == 0 && (z.meta().flags & kMetaBigEncoding) == 0) score = 0;
  if (old) {
    if (Status s = EraseZScoreElement(z, *old, member); !s.ok()) return s;
  }
  z.Put(ElementCf::kZSet, member, EncodeZScore(score));
  const std::string element = ZScoreKey(score, member);
  const std::string_view value = ZScoreValue(score);
  z.Put(ElementCf::kZScore, element, value);
  return ZHeadInsert(z, element, !value.empty());
}

Status EraseZMember(Collection& z, std::string_view member, double score) {
  z.Erase(ElementCf::kZSet, member);
  z.meta().count -= 1;
  return EraseZScoreElement(z, score, member);
}

namespace {
bool AboveMin(double s, ScoreBound min) { return min.exclusive ? s > min.value : s >= min.value; }
bool BelowMax(double s, ScoreBound max) { return max.exclusive ? s < max.value : s <= max.value; }
}  // namespace

Result<ScoredMembers> ZScoreRange(Collection& z, ScoreBound min, ScoreBound max, bool rev,
                                  int64_t offset, int64_t count) {
  ScoredMembers out;
  if (!z.exists() || offset < 0) return out;
  auto it = NewZScoreIterator(z);
  // Seek next to the bound (a score just past it, so that a -0 stored under -0's own order bytes
  // is not missed); the loop skips what is still outside.
  if (rev) {
    if (max.value == INFINITY) {
      it->SeekToLast();
    } else {
      it->SeekForPrev(z.SubKey(ZScoreKey(std::nextafter(max.value, INFINITY), "")));
    }
  } else {
    if (min.value == -INFINITY) {
      it->SeekToFirst();
    } else {
      it->Seek(z.SubKey(ZScoreKey(std::nextafter(min.value, -INFINITY), "")));
    }
  }
  for (; it->Valid() && count != 0; rev ? it->Prev() : it->Next()) {
    const std::string_view el = z.ElementOf(it->key());
    const double s = ZScoreOfEntry(el, it->value().ToStringView());
    if (rev ? !BelowMax(s, max) : !AboveMin(s, min)) continue;
    if (rev ? !AboveMin(s, min) : !BelowMax(s, max)) break;
    if (offset > 0) {
      --offset;
      continue;
    }
    out.emplace_back(std::string(el.substr(8)), s);
    if (count > 0) --count;
  }
  if (!it->status().ok()) return FromRocks(it->status());
  return out;
}

Result<ScoredMembers> ZRankRange(Collection& z, int64_t start, int64_t stop, bool rev) {
  const int64_t len = z.size();
  if (start < 0) start = std::max<int64_t>(0, len + start);
  if (stop < 0) stop = len + stop;
  if (start > stop || start >= len) return ScoredMembers{};
  if (stop >= len) stop = len - 1;
  if (!rev) {
    ScoredMembers from_head;
    auto head = ZHeadRange(z, start, stop, &from_head);
    if (!head.ok()) return head.status();
    if (*head) return from_head;
  }
  ScoreBound all_min{-INFINITY, false};
  ScoreBound all_max{INFINITY, false};
  const int64_t from_other_end = len - 1 - stop;
  if (from_other_end < start) {  // nearer the other end (ZRANGE key -10 -1): walk from there
    auto turned = ZScoreRange(z, all_min, all_max, !rev, from_other_end, stop - start + 1);
    if (turned.ok()) std::reverse(turned->begin(), turned->end());
    return turned;
  }
  return ZScoreRange(z, all_min, all_max, rev, start, stop - start + 1);
}

}  // namespace internal

namespace {

using internal::EraseZMember;
using internal::GetZScore;
using internal::OpenZSet;
using internal::PutZMember;
using internal::ZRankRange;
using internal::ZScoreRange;

Result<int64_t> RemoveAll(Collection& z, const Result<ScoredMembers>& doomed) {
  if (!doomed.ok()) return doomed.status();
  for (const auto& [member, score] : *doomed) {
    if (Status s = EraseZMember(z, member, score); !s.ok()) return s;
  }
  if (!doomed->empty()) {
    if (Status s = internal::SaveZSet(z); !s.ok()) return s;
  }
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
    auto old = GetZScore(*z, member);
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
        if (Status s = PutZMember(*z, member, score, *old); !s.ok()) return s;
        ++changed;
      }
    } else {
      if (f.xx) continue;
      reply.score = score;
      if (Status s = PutZMember(*z, member, score, std::nullopt); !s.ok()) return s;
      ++added;
    }
  }
  if (added + changed > 0) {
    if (Status s = internal::SaveZSet(*z); !s.ok()) return s;
  }
  reply.count = f.ch ? added + changed : added;
  return reply;
}

Result<int64_t> Store::Transaction::ZRem(int db, std::string_view key,
                                         std::span<const std::string_view> members) {
  auto z = OpenZSet(*txn_, db, key, true);
  if (!z.ok()) return z.status();
  int64_t removed = 0;
  for (std::string_view m : members) {
    auto old = GetZScore(*z, m);
    if (!old.ok()) return old.status();
    if (!old->has_value()) continue;
    if (Status s = EraseZMember(*z, m, **old); !s.ok()) return s;
    ++removed;
  }
  if (removed > 0) {
    if (Status s = internal::SaveZSet(*z); !s.ok()) return s;
  }
  return removed;
}

Result<int64_t> Store::Transaction::ZCard(int db, std::string_view key) {
  auto z = OpenZSet(*txn_, db, key, false);
  if (!z.ok()) return z.status();
  return z->size();
}

Result<std::optional<double>> Store::Transaction::ZScore(int db, std::string_view key,
                                                         std::string_view member) {
  // The metadata and the element of one moment.
  Txn::SnapshotReads one_state(*txn_, Txn::SnapshotReads::OneKey{});
  auto z = OpenZSet(*txn_, db, key, false);
  if (!z.ok()) return z.status();
  return GetZScore(*z, member);
}

Result<int64_t> Store::Transaction::ZCount(int db, std::string_view key, ScoreBound min,
                                           ScoreBound max) {
  auto r = ZRangeByScore(db, key, min, max, false, 0, -1);
  if (!r.ok()) return r.status();
  return static_cast<int64_t>(r->size());
}

Result<ScoredMembers> Store::Transaction::ZRangeByRank(int db, std::string_view key, int64_t start,
                                                       int64_t stop, bool rev) {
  // The metadata and elements of one moment.
  Txn::SnapshotReads one_state(*txn_, Txn::SnapshotReads::OneKey{});
  auto z = OpenZSet(*txn_, db, key, false);
  if (!z.ok()) return z.status();
  return ZRankRange(*z, start, stop, rev);
}

Result<ScoredMembers> Store::Transaction::ZRangeByScore(int db, std::string_view key,
                                                        ScoreBound min, ScoreBound max, bool rev,
                                                        int64_t offset, int64_t count) {
  // The metadata and elements of one moment.
  Txn::SnapshotReads one_state(*txn_, Txn::SnapshotReads::OneKey{});
  auto z = OpenZSet(*txn_, db, key, false);
  if (!z.ok()) return z.status();
  return ZScoreRange(*z, min, max, rev, offset, count);
}

Result<int64_t> Store::Transaction::ZRemRangeByRank(int db, std::string_view key, int64_t start,
                                                    int64_t stop) {
  auto z = OpenZSet(*txn_, db, key, true);
  if (!z.ok()) return z.status();
  return RemoveAll(*z, ZRankRange(*z, start, stop, false));
}

Result<int64_t> Store::Transaction::ZRemRangeByScore(int db, std::string_view key, ScoreBound min,
                                                     ScoreBound max) {
  auto z = OpenZSet(*txn_, db, key, true);
  if (!z.ok()) return z.status();
  return RemoveAll(*z, ZScoreRange(*z, min, max, false, 0, -1));
}

}  // namespace sluice
