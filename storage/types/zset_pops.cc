// Sorted set pops (ZPOPMIN, ZPOPMAX, ZMPOP: also the retry step of a blocking pop), random picks
// (ZRANDMEMBER) and ZSCAN.
#include <algorithm>
#include <cmath>
#include <limits>

#include "collection.h"
#include "sluice/glob.h"
#include "store_impl.h"
#include "txn.h"
#include "zset_elements.h"

namespace sluice {

using internal::Collection;
using internal::ElementCf;
using internal::Txn;
using ScoredMembers = Store::Transaction::ScoredMembers;
using ZEnd = Store::Transaction::ZEnd;

namespace {

// Beyond this many repeated picks ZRANDMEMBER is refused rather than built in memory.
constexpr int64_t kMaxRepeatedPicks = int64_t{1} << 26;
// From this size one pick seeks to a random point in the member order (O(log n), roughly
// uniform), as HRANDFIELD and SRANDMEMBER do; smaller sets and counts read every member.
constexpr int64_t kSeekPickMin = 64;

// Removes up to `count` members from `end` of an existing set and stages its metadata.
Result<ScoredMembers> PopSome(Collection& z, ZEnd end, int64_t count) {
  const int64_t n = std::min(count, z.size());
  auto popped = internal::ZRankRange(z, 0, n - 1, end == ZEnd::kMax);
  if (!popped.ok() || n <= 0) return popped;
  for (const auto& [member, score] : *popped) {
    if (Status s = internal::EraseZMember(z, member, score); !s.ok()) return s;
  }
  if (end == ZEnd::kMax && !popped->empty()) {
    internal::ZFenceAt(z, internal::ZScoreKey(popped->back().second, popped->back().first));
  }
  if (Status s = internal::SaveZSet(z); !s.ok()) return s;
  return popped;
}

// Every member, in Redis's order.
Result<ScoredMembers> AllMembers(Collection& z) { return internal::ZRankRange(z, 0, -1, false); }

}  // namespace

Result<ScoredMembers> Store::Transaction::ZPop(int db, std::string_view key, ZEnd end,
                                               int64_t count) {
  auto z = internal::OpenZSet(*txn_, db, key, true);
  if (!z.ok()) return z.status();
  if (!z->exists() || count <= 0) return ScoredMembers{};
  return PopSome(*z, end, count);
}

Result<std::optional<std::pair<std::string, ScoredMembers>>> Store::Transaction::ZMPop(
    int db, std::span<const std::string_view> keys, ZEnd end, int64_t count) {
  using Popped = std::optional<std::pair<std::string, ScoredMembers>>;
  for (std::string_view key : keys) {
    auto z = internal::OpenZSet(*txn_, db, key, true);
    if (!z.ok()) return z.status();
    if (!z->exists()) continue;
    auto popped = PopSome(*z, end, count);
    if (!popped.ok()) return popped.status();
    return Popped(std::make_pair(std::string(key), std::move(*popped)));
  }
  return Popped();
}

Result<ScoredMembers> Store::Transaction::ZRandMember(int db, std::string_view key, int64_t count) {
  // The metadata and elements of one moment.
  Txn::SnapshotReads one_state(*txn_, Txn::SnapshotReads::OneKey{});
  auto z = internal::OpenZSet(*txn_, db, key, false);
  if (!z.ok()) return z.status();
  if (count < -kMaxRepeatedPicks) return Status::InvalidArgument("count too large");
  if (!z->exists() || count == 0) return ScoredMembers{};
  if (count == 1 && z->size() >= kSeekPickMin) {  // one pick from a big set: O(log n)
    auto one = internal::SeekRandomElement(*z, ElementCf::kZSet);
    if (!one.ok()) return one.status();
    return ScoredMembers{{std::move(one->first), internal::DecodeZScore(one->second)}};
  }
  auto all = AllMembers(*z);
  if (!all.ok() || all->empty()) return all;
  ScoredMembers& members = *all;
  if (count < 0) {
    ScoredMembers out;
    out.reserve(static_cast<size_t>(-count));
    for (int64_t i = 0; i < -count; ++i) {
      out.push_back(members[internal::RandomU64() % members.size()]);
    }
    return out;
  }
  if (static_cast<uint64_t>(count) >= members.size()) return all;
  // A partial Fisher-Yates shuffle: `count` distinct picks.
  for (size_t i = 0; i < static_cast<size_t>(count); ++i) {
    const size_t j = i + internal::RandomU64() % (members.size() - i);
    std::swap(members[i], members[j]);
  }
  members.resize(static_cast<size_t>(count));
  return all;
}

Result<Store::Transaction::ZScanReply> Store::Transaction::ZScan(
    int db, std::string_view key, uint64_t cursor, std::optional<std::string_view> match,
    int64_t count) {
  // The metadata and elements of one moment.
  Txn::SnapshotReads one_state(*txn_, Txn::SnapshotReads::OneKey{});
  auto z = internal::OpenZSet(*txn_, db, key, false);
  if (!z.ok()) return z.status();
  ZScanReply reply;
  if (!z->exists()) return reply;
  if ((z->meta().flags & internal::kMetaBigEncoding) == 0) {
    auto all = AllMembers(*z);
    if (!all.ok()) return all.status();
    for (auto& item : *all) {
      if (!match || *match == "*" || GlobMatch(*match, item.first)) {
        reply.items.push_back(std::move(item));
      }
    }
    return reply;
  }
  auto page = internal::ScanElements(*z, ElementCf::kZSet, cursor, match, count);
  if (!page.ok()) return page.status();
  reply.next_cursor = page->next_cursor;
  for (auto& [member, stored] : page->items) {
    reply.items.emplace_back(std::move(member), internal::DecodeZScore(stored));
  }
  return reply;
}

}  // namespace sluice
