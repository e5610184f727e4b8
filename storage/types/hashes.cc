// The hash commands as Store::Transaction operations. Each runs on a HashBody (hash_body.h),
// which keeps a small hash's fields inside its metadata and a big one's in the `hash` column
// family, in insertion order either way (Redis's listpack order; an overwrite keeps a field's
// place).
#include <algorithm>
#include <cmath>
#include <limits>

#include "collection.h"
#include "hash_body.h"
#include "numeric.h"
#include "sluice/encoding_limits.h"
#include "sluice/glob.h"
#include "store_impl.h"
#include "txn.h"

namespace sluice {

using internal::Collection;
using internal::ElementCf;
using internal::HashBody;
using internal::Txn;
using FieldValues = std::vector<std::pair<std::string, std::string>>;

namespace {

// Hashes at least this big pick a single random field by seeking instead of reading them all.
constexpr int64_t kSeekPickMin = 64;
// A negative count's reply holds -count picks: refused beyond this (it would not fit in memory).
constexpr int64_t kMaxRepeatedPicks = int64_t{1} << 26;

Result<Collection> OpenHash(Txn& txn, int db, std::string_view key, bool write) {
  return Collection::Open(txn, db, key, ValueKind::kHash, write);
}

// Redis converts a listpack hash once a field or value is longer than hash-max-listpack-value
// bytes, or it has more than hash-max-listpack-entries fields (sluice/encoding_limits.h); never
// back.
void NoteSize(Collection& h, std::string_view field, std::string_view value) {
  const auto limit = static_cast<size_t>(GetEncodingLimits().hash_max_listpack_value);
  if (field.size() > limit || value.size() > limit) {
    h.meta().flags |= internal::kMetaBigEncoding;
  }
}
void NoteCount(Collection& h) {
  if (h.meta().count > GetEncodingLimits().hash_max_listpack_entries) {
    h.meta().flags |= internal::kMetaBigEncoding;
  }
}

// The stored value of a field (nullopt when the hash or the field is missing).
Result<std::optional<std::string>> GetField(Collection& h, std::string_view field) {
  if (!h.exists()) return std::optional<std::string>();
  return HashBody(h).Get(field);
}

// Every field with its value, in insertion order.
Result<FieldValues> AllFields(Collection& h) {
  if (!h.exists()) return FieldValues{};
  return HashBody(h).All();
}

}  // namespace

Result<int64_t> Store::Transaction::HSet(
    int db, std::string_view key,
    std::span<const std::pair<std::string_view, std::string_view>> pairs) {
  auto h = OpenHash(*txn_, db, key, true);
  if (!h.ok()) return h.status();
  h->Create();
  for (const auto& [field, value] : pairs) NoteSize(*h, field, value);
  HashBody body(*h);
  int64_t added = 0;
  for (const auto& [field, value] : pairs) {
    auto isnew = body.Set(field, value);
    if (!isnew.ok()) return isnew.status();
    added += *isnew ? 1 : 0;
  }
  NoteCount(*h);
  body.Save();
  return added;
}

Result<bool> Store::Transaction::HSetNx(int db, std::string_view key, std::string_view field,
                                        std::string_view value) {
  auto h = OpenHash(*txn_, db, key, true);
  if (!h.ok()) return h.status();
  auto cur = GetField(*h, field);
  if (!cur.ok()) return cur.status();
  if (cur->has_value()) return false;
  h->Create();
  NoteSize(*h, field, value);
  HashBody body(*h);
  auto isnew = body.Set(field, value);
  if (!isnew.ok()) return isnew.status();
  NoteCount(*h);
  body.Save();
  return true;
}

Result<std::optional<std::string>> Store::Transaction::HGet(int db, std::string_view key,
                                                            std::string_view field) {
  auto h = OpenHash(*txn_, db, key, false);
  if (!h.ok()) return h.status();
  return GetField(*h, field);
}

Result<std::vector<std::optional<std::string>>> Store::Transaction::HMGet(
    int db, std::string_view key, std::span<const std::string_view> fields) {
  // The metadata and elements of one moment.
  Txn::SnapshotReads one_state(*txn_, Txn::SnapshotReads::OneKey{});
  auto h = OpenHash(*txn_, db, key, false);
  if (!h.ok()) return h.status();
  std::vector<std::optional<std::string>> out;
  out.reserve(fields.size());
  for (std::string_view f : fields) {
    auto v = GetField(*h, f);
    if (!v.ok()) return v.status();
    out.push_back(std::move(*v));
  }
  return out;
}

Result<FieldValues> Store::Transaction::HGetAll(int db, std::string_view key) {
  // The metadata and elements of one moment.
  Txn::SnapshotReads one_state(*txn_, Txn::SnapshotReads::OneKey{});
  auto h = OpenHash(*txn_, db, key, false);
  if (!h.ok()) return h.status();
  return AllFields(*h);
}

Result<int64_t> Store::Transaction::HDel(int db, std::string_view key,
                                         std::span<const std::string_view> fields) {
  auto h = OpenHash(*txn_, db, key, true);
  if (!h.ok()) return h.status();
  if (!h->exists()) return int64_t{0};
  HashBody body(*h);
  int64_t removed = 0;
  for (std::string_view f : fields) {
    auto gone = body.Erase(f);
    if (!gone.ok()) return gone.status();
    removed += *gone ? 1 : 0;
  }
  if (removed > 0) body.Save();
  return removed;
}

Result<int64_t> Store::Transaction::HLen(int db, std::string_view key) {
  auto h = OpenHash(*txn_, db, key, false);
  if (!h.ok()) return h.status();
  return h->size();
}

Result<bool> Store::Transaction::HExists(int db, std::string_view key, std::string_view field) {
  auto v = HGet(db, key, field);
  if (!v.ok()) return v.status();
  return v->has_value();
}

Result<int64_t> Store::Transaction::HStrLen(int db, std::string_view key, std::string_view field) {
  auto v = HGet(db, key, field);
  if (!v.ok()) return v.status();
  return v->has_value() ? static_cast<int64_t>((*v)->size()) : int64_t{0};
}

Result<int64_t> Store::Transaction::HIncrBy(int db, std::string_view key, std::string_view field,
                                            int64_t delta) {
  auto h = OpenHash(*txn_, db, key, true);
  if (!h.ok()) return h.status();
  auto cur = GetField(*h, field);
  if (!cur.ok()) return cur.status();
  int64_t old = 0;
  if (cur->has_value()) {
    auto parsed = internal::ParseInt64(**cur);
    if (!parsed) return Status::InvalidArgument("hash value is not an integer");
    old = *parsed;
  }
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  if ((delta < 0 && old < 0 && delta < kMin - old) ||
      (delta > 0 && old > 0 && delta > kMax - old)) {
    return Status::Overflow();
  }
  const int64_t result = old + delta;
  h->Create();
  const std::string text = std::to_string(result);
  NoteSize(*h, field, text);
  HashBody body(*h);
  if (auto s = body.Set(field, text); !s.ok()) return s.status();
  NoteCount(*h);
  body.Save();
  return result;
}

Result<std::string> Store::Transaction::HIncrByFloat(int db, std::string_view key,
                                                     std::string_view field, long double delta) {
  auto h = OpenHash(*txn_, db, key, true);
  if (!h.ok()) return h.status();
  auto cur = GetField(*h, field);
  if (!cur.ok()) return cur.status();
  long double value = 0;
  if (cur->has_value()) {
    auto parsed = internal::ParseLongDouble(**cur);
    if (!parsed) return Status::InvalidArgument("hash value is not a float");
    value = *parsed;
  }
  value += delta;
  if (std::isnan(value) || std::isinf(value)) {
    return Status::InvalidArgument("increment would produce NaN or Infinity");
  }
  std::string text = internal::FormatLongDouble(value);
  h->Create();
  NoteSize(*h, field, text);
  HashBody body(*h);
  if (auto s = body.Set(field, text); !s.ok()) return s.status();
  NoteCount(*h);
  body.Save();
  return text;
}

Result<FieldValues> Store::Transaction::HRandField(int db, std::string_view key, int64_t count) {
  // The metadata and elements of one moment.
  Txn::SnapshotReads one_state(*txn_, Txn::SnapshotReads::OneKey{});
  auto h = OpenHash(*txn_, db, key, false);
  if (!h.ok()) return h.status();
  if (count < -kMaxRepeatedPicks) return Status::InvalidArgument("count too large");
  if (!h->exists() || count == 0) return FieldValues{};
  // One pick from a hash of many field entries: seek, O(log n).
  if (count == 1 && h->size() >= kSeekPickMin && (h->meta().flags & internal::kMetaInline) == 0) {
    auto one = internal::SeekRandomElement(*h, ElementCf::kHash);
    if (!one.ok()) return one.status();
    return FieldValues{{std::move(one->first), std::string(internal::HashFieldValue(one->second))}};
  }
  auto all = AllFields(*h);
  if (!all.ok()) return all.status();
  if (all->empty()) return FieldValues{};
  FieldValues& fields = *all;
  FieldValues out;
  if (count < 0) {
    const uint64_t n = count == std::numeric_limits<int64_t>::min() ? uint64_t{1} << 63
                                                                    : static_cast<uint64_t>(-count);
    out.reserve(static_cast<size_t>(std::min<uint64_t>(n, 1 << 20)));
    for (uint64_t i = 0; i < n; ++i) out.push_back(fields[internal::RandomU64() % fields.size()]);
    return out;
  }
  if (static_cast<uint64_t>(count) >= fields.size()) return std::move(fields);
  // A partial Fisher-Yates shuffle: `count` distinct picks.
  for (size_t i = 0; i < static_cast<size_t>(count); ++i) {
    const size_t j = i + internal::RandomU64() % (fields.size() - i);
    std::swap(fields[i], fields[j]);
  }
  fields.resize(static_cast<size_t>(count));
  return std::move(fields);
}

Result<ElementScanReply> Store::Transaction::HScan(int db, std::string_view key, uint64_t cursor,
                                                   std::optional<std::string_view> match,
                                                   int64_t count) {
  // The metadata and elements of one moment.
  Txn::SnapshotReads one_state(*txn_, Txn::SnapshotReads::OneKey{});
  auto h = OpenHash(*txn_, db, key, false);
  if (!h.ok()) return h.status();
  ElementScanReply reply;
  if (!h->exists()) return reply;
  // Redis's listpack encoding (every inline hash, and small ones stored before that layout):
  // one page.
  if ((h->meta().flags & internal::kMetaBigEncoding) == 0) {
    auto all = AllFields(*h);
    if (!all.ok()) return all.status();
    for (auto& fv : *all) {
      if (!match || *match == "*" || GlobMatch(*match, fv.first)) reply.items.push_back(fv);
    }
    return reply;
  }
  auto page = internal::ScanElements(*h, ElementCf::kHash, cursor, match, count);
  if (!page.ok()) return page.status();
  reply.next_cursor = page->next_cursor;
  for (auto& [field, stored] : page->items) {
    reply.items.emplace_back(std::move(field), std::string(internal::HashFieldValue(stored)));
  }
  return reply;
}

}  // namespace sluice
