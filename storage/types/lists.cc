// List commands on Store::Transaction. Every one runs on a ListBody (list_body.h), which holds
// the elements in either layout: inline in the metadata for small lists, one entry per element
// for big ones.
#include <algorithm>
#include <limits>

#include "collection.h"
#include "list_body.h"
#include "store_impl.h"
#include "txn.h"

namespace sluice {

using internal::Collection;
using internal::ListBody;
using internal::Txn;
using ListEnd = Store::Transaction::ListEnd;
using Elements = std::vector<std::string>;

namespace {

Result<Collection> OpenList(Txn& txn, int db, std::string_view key, bool write) {
  return Collection::Open(txn, db, key, ValueKind::kList, write);
}

// Pops up to `count` elements from `end`, in pop order; the caller Saves.
Result<Elements> PopSome(ListBody& list, ListEnd end, int64_t count) {
  Elements out;
  while (count-- > 0 && list.size() > 0) {
    Result<std::string> v = list.Pop(end);
    if (!v.ok()) return v.status();
    out.push_back(std::move(*v));
  }
  return out;
}

// Normalizes a Redis index (negative from the tail); the result may still be out of [0, len).
int64_t Normalize(int64_t index, int64_t len) { return index < 0 ? len + index : index; }

// LRANGE/LTRIM's clamping: the inclusive range [*start, *stop] of a list of len elements; false
// when it is empty.
bool ClampRange(int64_t len, int64_t* start, int64_t* stop) {
  if (*start < 0) *start = std::max<int64_t>(0, len + *start);
  if (*stop < 0) *stop = len + *stop;
  if (*start > *stop || *start >= len) return false;
  if (*stop >= len) *stop = len - 1;
  return true;
}

}  // namespace

Result<int64_t> Store::Transaction::ListPush(int db, std::string_view key, ListEnd end,
                                             std::span<const std::string_view> elements,
                                             bool only_if_exists) {
  auto c = OpenList(*txn_, db, key, true);
  if (!c.ok()) return c.status();
  if (!c->exists() && only_if_exists) return int64_t{0};
  c->Create();
  ListBody list(*c);
  for (std::string_view el : elements) list.Push(end, el);
  if (Status s = list.Save(); !s.ok()) return s;
  return list.size();
}

Result<std::optional<Elements>> Store::Transaction::ListPop(int db, std::string_view key,
                                                            ListEnd end, int64_t count) {
  auto c = OpenList(*txn_, db, key, true);
  if (!c.ok()) return c.status();
  if (!c->exists()) return std::optional<Elements>();
  ListBody list(*c);
  auto popped = PopSome(list, end, count);
  if (!popped.ok()) return popped.status();
  if (!popped->empty()) {
    if (Status s = list.Save(); !s.ok()) return s;
  }
  return std::optional<Elements>(std::move(*popped));
}

Result<int64_t> Store::Transaction::LLen(int db, std::string_view key) {
  auto c = OpenList(*txn_, db, key, false);
  if (!c.ok()) return c.status();
  return c->size();
}

Result<std::optional<std::string>> Store::Transaction::LIndex(int db, std::string_view key,
                                                              int64_t index) {
  // The metadata and the element of one moment.
  Txn::SnapshotReads one_state(*txn_, Txn::SnapshotReads::OneKey{});
  auto c = OpenList(*txn_, db, key, false);
  if (!c.ok()) return c.status();
  const int64_t i = Normalize(index, c->size());
  if (i < 0 || i >= c->size()) return std::optional<std::string>();
  ListBody list(*c);
  Result<std::string> v = list.At(i);
  if (!v.ok()) return v.status();
  return std::optional<std::string>(std::move(*v));
}

Status Store::Transaction::LSet(int db, std::string_view key, int64_t index,
                                std::string_view element) {
  auto c = OpenList(*txn_, db, key, true);
  if (!c.ok()) return c.status();
  if (!c->exists()) return Status::NoSuchKey();
  const int64_t i = Normalize(index, c->size());
  if (i < 0 || i >= c->size()) return Status::InvalidArgument("index out of range");
  ListBody list(*c);
  list.Set(i, element);
  return list.is_inline() ? list.Save() : Status::Ok();  // a big list's metadata is unchanged
}

Result<Elements> Store::Transaction::LRange(int db, std::string_view key, int64_t start,
                                            int64_t stop) {
  // The metadata and elements of one moment.
  Txn::SnapshotReads one_state(*txn_, Txn::SnapshotReads::OneKey{});
  auto c = OpenList(*txn_, db, key, false);
  if (!c.ok()) return c.status();
  if (!ClampRange(c->size(), &start, &stop)) return Elements{};
  ListBody list(*c);
  return list.Range(start, stop - start + 1);
}

Status Store::Transaction::LTrim(int db, std::string_view key, int64_t start, int64_t stop) {
  auto c = OpenList(*txn_, db, key, true);
  if (!c.ok()) return c.status();
  if (!c->exists()) return Status::Ok();
  ListBody list(*c);
  const int64_t len = list.size();
  int64_t from = len;  // nothing kept, unless the range is non-empty
  int64_t to = len;
  if (ClampRange(len, &start, &stop)) {
    from = start;
    to = stop + 1;
  }
  if (from == 0 && to == len) return Status::Ok();
  list.Keep(from, to);
  return list.Save();
}

Result<int64_t> Store::Transaction::LRem(int db, std::string_view key, int64_t count,
                                         std::string_view element) {
  auto c = OpenList(*txn_, db, key, true);
  if (!c.ok()) return c.status();
  if (!c->exists()) return int64_t{0};
  ListBody list(*c);
  auto all = list.Range(0, list.size());
  if (!all.ok()) return all.status();
  Elements& v = *all;
  const uint64_t limit = count == 0 ? std::numeric_limits<uint64_t>::max()
                                    : (count > 0 ? static_cast<uint64_t>(count)
                                                 : uint64_t{0} - static_cast<uint64_t>(count));
  std::vector<bool> drop(v.size(), false);
  uint64_t removed = 0;
  for (size_t n = 0; n < v.size() && removed < limit; ++n) {
    const size_t i = count >= 0 ? n : v.size() - 1 - n;
    if (v[i] == element) {
      drop[i] = true;
      ++removed;
    }
  }
  if (removed == 0) return int64_t{0};
  const size_t first =
      static_cast<size_t>(std::find(drop.begin(), drop.end(), true) - drop.begin());
  Elements rest;
  for (size_t i = first; i < v.size(); ++i) {
    if (!drop[i]) rest.push_back(std::move(v[i]));
  }
  list.ReplaceFrom(static_cast<int64_t>(first), std::move(rest));
  if (Status s = list.Save(); !s.ok()) return s;
  return static_cast<int64_t>(removed);
}

Result<int64_t> Store::Transaction::LInsert(int db, std::string_view key, bool after,
                                            std::string_view pivot, std::string_view element) {
  auto c = OpenList(*txn_, db, key, true);
  if (!c.ok()) return c.status();
  if (!c->exists()) return int64_t{0};
  ListBody list(*c);
  auto all = list.Range(0, list.size());
  if (!all.ok()) return all.status();
  Elements& v = *all;
  auto it = std::find(v.begin(), v.end(), pivot);
  if (it == v.end()) return int64_t{-1};
  const int64_t at = (it - v.begin()) + (after ? 1 : 0);
  if (at == 0) {
    list.Push(ListEnd::kLeft, element);
  } else {
    Elements rest;
    rest.reserve(v.size() - static_cast<size_t>(at) + 1);
    rest.emplace_back(element);
    for (size_t i = static_cast<size_t>(at); i < v.size(); ++i) rest.push_back(std::move(v[i]));
    list.ReplaceFrom(at, std::move(rest));
  }
  if (Status s = list.Save(); !s.ok()) return s;
  return list.size();
}

Result<std::vector<int64_t>> Store::Transaction::LPos(int db, std::string_view key,
                                                      std::string_view element, int64_t rank,
                                                      int64_t count, int64_t maxlen) {
  // The metadata and elements of one moment.
  Txn::SnapshotReads one_state(*txn_, Txn::SnapshotReads::OneKey{});
  auto c = OpenList(*txn_, db, key, false);
  if (!c.ok()) return c.status();
  std::vector<int64_t> out;
  if (!c->exists()) return out;
  const bool from_tail = rank < 0;
  // -INT64_MIN overflows in Redis and stays negative: every match qualifies, as for rank -1.
  const uint64_t skip = rank == std::numeric_limits<int64_t>::min()
                            ? 0
                            : (from_tail ? static_cast<uint64_t>(-rank) : rank) - 1;
  uint64_t matches = 0;
  int64_t seen = 0;
  ListBody list(*c);
  Status s = list.Visit(from_tail, [&](int64_t index, std::string_view value) {
    if (maxlen != 0 && seen++ >= maxlen) return false;
    if (value == element && matches++ >= skip) {
      out.push_back(index);
      if (count != 0 && static_cast<int64_t>(out.size()) >= count) return false;
    }
    return true;
  });
  if (!s.ok()) return s;
  return out;
}

Result<std::optional<std::string>> Store::Transaction::LMove(int db, std::string_view src,
                                                             std::string_view dst, ListEnd from,
                                                             ListEnd to) {
  auto s = OpenList(*txn_, db, src, true);
  if (!s.ok()) return s.status();
  if (!s->exists()) return std::optional<std::string>();
  if (src == dst) {
    ListBody list(*s);
    auto popped = list.Pop(from);
    if (!popped.ok()) return popped.status();
    list.Push(to, *popped);
    if (Status st = list.Save(); !st.ok()) return st;
    return std::optional<std::string>(std::move(*popped));
  }
  auto d = OpenList(*txn_, db, dst, true);
  if (!d.ok()) return d.status();
  ListBody source(*s);
  auto popped = source.Pop(from);
  if (!popped.ok()) return popped.status();
  d->Create();
  ListBody dest(*d);
  dest.Push(to, *popped);
  if (Status st = source.Save(); !st.ok()) return st;
  if (Status st = dest.Save(); !st.ok()) return st;
  return std::optional<std::string>(std::move(*popped));
}

Result<std::optional<std::pair<std::string, Elements>>> Store::Transaction::LMPop(
    int db, std::span<const std::string_view> keys, ListEnd end, int64_t count) {
  using Popped = std::optional<std::pair<std::string, Elements>>;
  for (std::string_view key : keys) {
    auto c = OpenList(*txn_, db, key, true);
    if (!c.ok()) return c.status();
    if (!c->exists()) continue;
    ListBody list(*c);
    auto popped = PopSome(list, end, count);
    if (!popped.ok()) return popped.status();
    if (Status s = list.Save(); !s.ok()) return s;
    return Popped(std::make_pair(std::string(key), std::move(*popped)));
  }
  return Popped();
}

}  // namespace sluice
