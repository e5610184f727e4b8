// String commands with Redis 7 semantics: GET, SET, GETDEL, GETEX, MGET, MSET, MSETNX,
// INCRBY, INCRBYFLOAT, APPEND, STRLEN, GETRANGE, SETRANGE.
#include <charconv>
#include <cmath>
#include <limits>

#include "numeric.h"
#include "scratch.h"
#include "store_impl.h"
#include "string_access.h"
#include "txn.h"

namespace sluice {

using internal::EncodeKey;
using internal::Entry;
using internal::EntryView;
using internal::kNoExpiry;
using internal::RawKey;
using internal::ReadString;
using internal::Txn;

namespace {

using Pairs = std::span<const std::pair<std::string_view, std::string_view>>;

const char kTooBig[] = "string exceeds maximum allowed size (proto-max-bulk-len)";

// Redis's checkStringLength: a string of `size + append` bytes must fit max_bytes.
bool FitsMax(int64_t size, int64_t append, int64_t max_bytes) {
  return size <= max_bytes && append <= max_bytes - size;
}

std::vector<std::string> RawKeys(int db, Pairs pairs) {
  std::vector<std::string> raw;
  raw.reserve(pairs.size());
  for (const auto& [k, v] : pairs) raw.push_back(EncodeKey(db, k));
  return raw;
}

// The expiry a SET leaves on the key, given the key's current entry (nullptr when absent).
int64_t ExpiryAfterSet(const ExpiryChange& change, const EntryView* current) {
  switch (change.kind) {
    case ExpiryChange::Kind::kKeep:
      return current ? current->expire_at_ms : kNoExpiry;
    case ExpiryChange::Kind::kPersist:
      return kNoExpiry;
    case ExpiryChange::Kind::kSetAt:
      return change.at_ms;
  }
  return kNoExpiry;
}

}  // namespace

Result<std::optional<std::string>> Store::Transaction::Get(int db, std::string_view key) {
  std::string value;
  bool found = false;
  Status s = GetInto(db, key, &value, &found);
  if (!s.ok()) return s;
  if (!found) return std::optional<std::string>();
  return std::optional<std::string>(std::move(value));
}

Status Store::Transaction::GetInto(int db, std::string_view key, std::string* value, bool* found) {
  *found = false;
  const RawKey raw(db, key);
  if (Status c = txn_->ClaimRead(raw); !c.ok()) return c;
  auto cur = txn_->ReadView(raw);
  if (!cur.ok() || !cur->has_value()) return cur.status();
  if ((*cur)->kind != ValueKind::kString) return Status::WrongType();
  value->assign((*cur)->payload);
  *found = true;
  return Status::Ok();
}

Result<SetReply> Store::Transaction::Set(int db, std::string_view key, std::string_view value,
                                         const SetOptions& options) {
  const RawKey raw(db, key);
  if (Status c = txn_->ClaimWrite(raw); !c.ok()) return c;
  Txn& txn = *txn_;
  // A plain SET (with or without EX/PX/EXAT/PXAT) depends on nothing stored: it overwrites
  // without reading, as MSET does (so an expired value it replaces is not counted in
  // Stats::expired_keys). It still holds the key's lock, so it orders with read-modify-writes.
  const bool blind = options.condition == SetCondition::kAlways && !options.return_old &&
                     options.expiry.kind != ExpiryChange::Kind::kKeep;
  std::optional<EntryView> cur;  // views the txn's read buffer: valid until its next read
  if (!blind) {
    auto read = txn.ReadView(raw);
    if (!read.ok()) return read.status();
    cur = *read;
  }
  const EntryView* current = cur ? &*cur : nullptr;
  SetReply reply;
  if (options.return_old && current) {
    if (current->kind != ValueKind::kString) return Status::WrongType();
    reply.old_value = std::string(current->payload);
  }
  bool blocked = (options.condition == SetCondition::kIfAbsent && current) ||
                 (options.condition == SetCondition::kIfPresent && !current);
  if (!blocked) {
    int64_t expire = ExpiryAfterSet(options.expiry, current);
    if (options.expiry.kind == ExpiryChange::Kind::kSetAt && txn.AlreadyExpired(expire)) {
      txn.Delete(raw);  // Redis: written, then expired at once
    } else {
      txn.Put(raw, ValueKind::kString, expire, value);
    }
    reply.written = true;
  }
  return reply;
}

Result<std::optional<std::string>> Store::Transaction::GetDel(int db, std::string_view key) {
  const RawKey raw(db, key);
  if (Status c = txn_->ClaimWrite(raw); !c.ok()) return c;
  Txn& txn = *txn_;
  auto cur = ReadString(txn, raw);
  if (!cur.ok()) return cur.status();
  std::optional<std::string> old;
  if (cur->has_value()) {
    old = std::move((*cur)->payload);
    txn.Delete(raw);
  }
  return old;
}

Result<std::optional<std::string>> Store::Transaction::GetEx(int db, std::string_view key,
                                                             ExpiryChange change) {
  const RawKey raw(db, key);
  if (Status c = txn_->ClaimWrite(raw); !c.ok()) return c;
  Txn& txn = *txn_;
  auto cur = ReadString(txn, raw);
  if (!cur.ok()) return cur.status();
  if (!cur->has_value()) return std::optional<std::string>();
  Entry& e = **cur;
  if (change.kind == ExpiryChange::Kind::kPersist && e.expire_at_ms != kNoExpiry) {
    e.expire_at_ms = kNoExpiry;
    txn.Put(raw, e);
  } else if (change.kind == ExpiryChange::Kind::kSetAt) {
    if (txn.AlreadyExpired(change.at_ms)) {
      txn.Delete(raw);
    } else {
      e.expire_at_ms = change.at_ms;
      txn.Put(raw, e);
    }
  }
  return std::optional<std::string>(std::move(e.payload));
}

Result<std::vector<std::optional<std::string>>> Store::Transaction::MGet(
    int db, std::span<const std::string_view> keys) {
  for (std::string_view k : keys) {
    if (Status c = ClaimRead(db, k); !c.ok()) return c;
  }
  // One state for every key: an MSET is seen entirely or not at all, as Redis's MGET would.
  Txn::SnapshotReads one_state(*txn_);
  std::vector<std::optional<std::string>> out;
  out.reserve(keys.size());
  for (std::string_view k : keys) {
    auto cur = txn_->ReadView(EncodeKey(db, k));
    if (!cur.ok()) return cur.status();
    if (cur->has_value() && (*cur)->kind == ValueKind::kString) {
      out.emplace_back(std::string((*cur)->payload));
    } else {
      out.emplace_back(std::nullopt);
    }
  }
  return out;
}

Status Store::Transaction::MSet(int db, Pairs pairs) {
  auto raw = RawKeys(db, pairs);
  for (const auto& k : raw) {
    if (Status c = txn_->ClaimWrite(k); !c.ok()) return c;
  }
  for (size_t i = 0; i < pairs.size(); ++i) {
    txn_->Put(raw[i], ValueKind::kString, kNoExpiry, pairs[i].second);  // later pairs win
  }
  return Status::Ok();
}

Result<bool> Store::Transaction::MSetNx(int db, Pairs pairs) {
  auto raw = RawKeys(db, pairs);
  for (const auto& k : raw) {
    if (Status c = txn_->ClaimWrite(k); !c.ok()) return c;
  }
  bool any_exists = false;
  for (const auto& k : raw) {
    auto cur = txn_->ReadView(k);
    if (!cur.ok()) return cur.status();
    any_exists = any_exists || cur->has_value();
  }
  if (!any_exists) {
    for (size_t i = 0; i < pairs.size(); ++i) {
      txn_->Put(raw[i], ValueKind::kString, kNoExpiry, pairs[i].second);
    }
  }
  return !any_exists;
}

Result<int64_t> Store::Transaction::IncrBy(int db, std::string_view key, int64_t delta) {
  const RawKey raw(db, key);
  if (Status c = txn_->ClaimWrite(raw); !c.ok()) return c;
  Txn& txn = *txn_;
  auto cur = txn.ReadView(raw);
  if (!cur.ok()) return cur.status();
  int64_t old = 0;
  int64_t expire = kNoExpiry;  // INCR keeps the key's TTL
  if (cur->has_value()) {
    if ((*cur)->kind != ValueKind::kString) return Status::WrongType();
    auto parsed = internal::ParseInt64((*cur)->payload);
    if (!parsed) return Status::NotInteger();
    old = *parsed;
    expire = (*cur)->expire_at_ms;
  }
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  if ((delta < 0 && old < 0 && delta < kMin - old) ||
      (delta > 0 && old > 0 && delta > kMax - old)) {
    return Status::Overflow();
  }
  const int64_t result = old + delta;
  char text[24];  // an int64 in decimal, as std::to_string writes it, without a string
  const auto printed = std::to_chars(text, text + sizeof(text), result);
  txn.Put(raw, ValueKind::kString, expire, std::string_view(text, printed.ptr - text));
  return result;
}

Result<std::string> Store::Transaction::IncrByFloat(int db, std::string_view key,
                                                    long double delta) {
  const RawKey raw(db, key);
  if (Status c = txn_->ClaimWrite(raw); !c.ok()) return c;
  Txn& txn = *txn_;
  auto cur = ReadString(txn, raw);
  if (!cur.ok()) return cur.status();
  long double value = 0;
  int64_t expire = kNoExpiry;
  if (cur->has_value()) {
    auto parsed = internal::ParseLongDouble((*cur)->payload);
    if (!parsed) return Status::NotFloat();
    value = *parsed;
    expire = (*cur)->expire_at_ms;
  }
  value += delta;
  if (std::isnan(value) || std::isinf(value)) {
    return Status::InvalidArgument("increment would produce NaN or Infinity");
  }
  std::string text = internal::FormatLongDouble(value);
  txn.Put(raw, ValueKind::kString, expire, text);
  return text;
}

Result<int64_t> Store::Transaction::Append(int db, std::string_view key, std::string_view value) {
  const RawKey raw(db, key);
  if (Status c = txn_->ClaimWrite(raw); !c.ok()) return c;
  Txn& txn = *txn_;
  auto cur = ReadString(txn, raw);
  if (!cur.ok()) return cur.status();
  Entry e;
  if (cur->has_value()) {
    e = std::move(**cur);
    auto size = static_cast<int64_t>(e.payload.size());
    if (!FitsMax(size, static_cast<int64_t>(value.size()), txn_->impl().max_value_bytes())) {
      return Status::InvalidArgument(kTooBig);
    }
  }
  e.payload.append(value);
  if (cur->has_value()) {
    PutEditedInPlace(txn, raw, e);
  } else {
    txn.Put(raw, e);  // a new key is stored as given, as Redis does
  }
  return static_cast<int64_t>(e.payload.size());
}

Result<int64_t> Store::Transaction::StrLen(int db, std::string_view key) {
  const RawKey raw(db, key);
  if (Status c = txn_->ClaimRead(raw); !c.ok()) return c;
  auto cur = ReadString(*txn_, raw);
  if (!cur.ok()) return cur.status();
  return cur->has_value() ? static_cast<int64_t>((*cur)->payload.size()) : int64_t{0};
}

Result<std::string> Store::Transaction::GetRange(int db, std::string_view key, int64_t start,
                                                 int64_t end) {
  const RawKey raw(db, key);
  if (Status c = txn_->ClaimRead(raw); !c.ok()) return c;
  auto e = ReadString(*txn_, raw);
  if (!e.ok()) return e.status();
  if (!e->has_value()) return std::string();
  if (start < 0 && end < 0 && start > end) return std::string();
  const std::string& str = (*e)->payload;
  const auto len = static_cast<int64_t>(str.size());
  if (start < 0) start = len + start;
  if (end < 0) end = len + end;
  if (start < 0) start = 0;
  if (end < 0) end = 0;
  if (end >= len) end = len - 1;
  if (start > end || len == 0) return std::string();
  return str.substr(static_cast<size_t>(start), static_cast<size_t>(end - start + 1));
}

Result<int64_t> Store::Transaction::SetRange(int db, std::string_view key, int64_t offset,
                                             std::string_view value) {
  if (offset < 0) return Status::InvalidArgument("offset is out of range");
  const RawKey raw(db, key);
  if (Status c = txn_->ClaimWrite(raw); !c.ok()) return c;
  Txn& txn = *txn_;
  auto cur = ReadString(txn, raw);
  if (!cur.ok()) return cur.status();
  Entry e;
  if (cur->has_value()) e = std::move(**cur);
  if (value.empty()) return static_cast<int64_t>(e.payload.size());  // sets nothing (0: no key)
  if (!FitsMax(offset, static_cast<int64_t>(value.size()), txn_->impl().max_value_bytes())) {
    return Status::InvalidArgument(kTooBig);
  }
  const size_t needed = static_cast<size_t>(offset) + value.size();
  if (e.payload.size() < needed) e.payload.resize(needed, '\0');
  e.payload.replace(static_cast<size_t>(offset), value.size(), value);
  PutEditedInPlace(txn, raw, e);  // Redis builds or unshares it in place, new key or not
  return static_cast<int64_t>(e.payload.size());
}

}  // namespace sluice
