// The sorted set element encoding and the helpers every zset_*.cc file shares (zsets.cc defines
// them). Internal header.
//
// Each member has two elements, written and erased together: member -> score (the double's 8
// bytes LE) in the `zset` column family, and [score][member] -> "" in `zscore`, the score
// order-preserving (sign-flipped big-endian double, -0 as 0), so the zscore range is the set in
// Redis's order (score, then member bytes). A big set also keeps a copy of its first elements in
// one record, its head (zset_head.cc), so that ZRANGE 0 N is one point read.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "collection.h"
#include "sluice/transaction.h"

namespace sluice::internal {

using ScoredMembers = Store::Transaction::ScoredMembers;
using ScoreBound = Store::Transaction::ScoreBound;

// The zscore element of (score, member), and the score back from one. -0 and 0 have the same
// order bytes (Redis orders -0 as 0, then by member); the element's value (ZScoreValue: "-" for
// -0, else empty) keeps the sign, and ZScoreOfEntry reads both.
std::string ZScoreKey(double score, std::string_view member);
double ZScoreOfKey(std::string_view element);
std::string_view ZScoreValue(double score);
double ZScoreOfEntry(std::string_view element, std::string_view value);
// The zset element's value (the score's 8 bytes LE), and back.
std::string EncodeZScore(double score);
double DecodeZScore(std::string_view stored);

Result<Collection> OpenZSet(Txn& txn, int db, std::string_view key, bool write);
// The member's score; nullopt when it (or the key) is missing.
Result<std::optional<double>> GetZScore(Collection& z, std::string_view member);
// Writes member at score, replacing `old` (its current score, if any); keeps the count and the
// big-encoding flag (128 members, a 64-byte member) right; a -0 score is stored as 0 while the set
// is small (as Redis's listpack does). The caller saves (SaveZSet).
Status PutZMember(Collection& z, std::string_view member, double score, std::optional<double> old);
// Erases a member the caller knows is there at `score`. The caller saves (SaveZSet).
Status EraseZMember(Collection& z, std::string_view member, double score);

// The head (zset_head.cc): at most kZHeadMax first elements of every big set, topped up from the
// elements past it when it falls under kZHeadMin (by SaveZSet: after each operation, ranks
// 0 .. kZHeadMin - 1 are in it, when the set has that many).
inline constexpr size_t kZHeadMax = 32;
inline constexpr size_t kZHeadMin = 16;
// Keep the head exact when the zscore element `element` is erased or inserted (PutZMember and
// EraseZMember call them).
Status ZHeadErase(Collection& z, std::string_view element);
Status ZHeadInsert(Collection& z, std::string_view element, bool minus_zero);
// Nothing live sorts above `element` (a pop from the high end just erased everything above it):
// walks from the high end start there. Inserts above it raise it (ZHeadInsert).
void ZFenceAt(Collection& z, std::string_view element);
// Collection::Save for a sorted set: first builds the head of a big set that has none. Every
// writer of a sorted set saves with it.
Status SaveZSet(Collection& z);
// Ranks start..stop (0 <= start <= stop) from the head: false when the set keeps no head or the
// head does not reach stop (then *out is unspecified).
Result<bool> ZHeadRange(Collection& z, int64_t start, int64_t stop, ScoredMembers* out);

// An iterator over the set's zscore elements, as z.NewIterator(ElementCf::kZScore), that serves
// the elements up to the head's boundary from the head and starts walks from the high end at the
// fence: walks from either end do not step over the elements erased there. Every zscore walk
// uses it. Do not write through the Txn while iterating; it lives within the Collection's
// operation.
std::unique_ptr<rocksdb::Iterator> NewZScoreIterator(Collection& z);

// Members with min <= score <= max in `rev` order, skipping offset (< 0: nothing at all), at most
// count (< 0: all).
Result<ScoredMembers> ZScoreRange(Collection& z, ScoreBound min, ScoreBound max, bool rev,
                                  int64_t offset, int64_t count);
// Ranks as LRANGE's indices (rev: rank 0 is the highest score).
Result<ScoredMembers> ZRankRange(Collection& z, int64_t start, int64_t stop, bool rev);

}  // namespace sluice::internal
