// Lists on the collection layout (collection.h): one element per list entry in the `list` column
// family, keyed by its position, an int64 encoded order-preserving (sign bit flipped, big-endian),
// so the elements' byte order is the list's order. The metadata's extra holds the ends:
// [head: 8 bytes LE][tail: 8 bytes LE], the positions of the first element and one past the
// last; count == tail - head. LPUSH takes head - 1, RPUSH takes tail: O(1) element writes. An
// index i is position head + i. Operations in the middle (LREM, LINSERT) rewrite the elements
// after the first change, keeping head.
#include <algorithm>
#include <limits>

#include "collection.h"
#include "store_impl.h"
#include "txn.h"

namespace sluice {

using internal::Collection;
using internal::ElementCf;
using internal::Txn;
using ListEnd = Store::Transaction::ListEnd;
using Elements = std::vector<std::string>;

namespace {

constexpr ElementCf kCf = ElementCf::kList;

int64_t ReadLe(std::string_view s, size_t at) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8 && at + i < s.size(); ++i) {
    v |= uint64_t{static_cast<unsigned char>(s[at + i])} << (8 * i);
  }
  return static_cast<int64_t>(v);
}

void AppendLe(std::string* out, int64_t v) {
  for (int i = 0; i < 8; ++i)
    out->push_back(static_cast<char>(static_cast<uint64_t>(v) >> (8 * i)));
}

// The element key of a position: order-preserving for every int64.
std::string PosKey(int64_t pos) {
  const uint64_t u = static_cast<uint64_t>(pos) ^ (uint64_t{1} << 63);
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(u >> (8 * (7 - i)));
  return out;
}

// A list's ends, kept in the metadata's extra (a new collection has both at 0).
struct Ends {
  int64_t head = 0;
  int64_t tail = 0;
};

Ends EndsOf(const Collection& c) {
  const std::string& e = c.meta().extra;
  if (e.size() < 16) return Ends{};
  return Ends{ReadLe(e, 0), ReadLe(e, 8)};
}

// Stores the ends and the count that follows from them.
void SetEnds(Collection& c, Ends ends) {
  c.meta().extra.clear();
  AppendLe(&c.meta().extra, ends.head);
  AppendLe(&c.meta().extra, ends.tail);
  c.meta().count = ends.tail - ends.head;
}

Result<Collection> OpenList(Txn& txn, int db, std::string_view key, bool write) {
  return Collection::Open(txn, db, key, ValueKind::kList, write);
}

// Pushes one element at `end` (the list exists or was Created).
void PushOne(Collection& c, ListEnd end, std::string_view element) {
  Ends e = EndsOf(c);
  if (end == ListEnd::kLeft) {
    e.head -= 1;
    c.Put(kCf, PosKey(e.head), element);
  } else {
    c.Put(kCf, PosKey(e.tail), element);
    e.tail += 1;
  }
  SetEnds(c, e);
}

// Pops up to `count` elements from `end`, in pop order; the caller Saves.
Result<Elements> PopSome(Collection& c, ListEnd end, int64_t count) {
  Elements out;
  Ends e = EndsOf(c);
  while (count-- > 0 && e.tail > e.head) {
    const int64_t pos = end == ListEnd::kLeft ? e.head : e.tail - 1;
    std::string value;
    bool found = false;
    if (Status s = c.Get(kCf, PosKey(pos), &value, &found); !s.ok()) return s;
    if (!found) return Status::Corruption("list element missing");
    c.Erase(kCf, PosKey(pos));
    out.push_back(std::move(value));
    if (end == ListEnd::kLeft) {
      e.head += 1;
    } else {
      e.tail -= 1;
    }
  }
  SetEnds(c, e);
  return out;
}

// Up to n elements from index `from` on, in order.
Result<Elements> ReadRange(Collection& c, int64_t from, int64_t n) {
  Elements out;
  if (!c.exists() || n <= 0) return out;
  auto it = c.NewIterator(kCf);
  it->Seek(c.SubKey(PosKey(EndsOf(c).head + from)));
  for (; it->Valid() && n > 0; it->Next(), --n) out.push_back(it->value().ToString());
  if (!it->status().ok()) return internal::FromRocks(it->status());
  return out;
}

// Replaces the elements from index `from` to the end with `rest` (positions from head + from),
// then Saves.
void RewriteFrom(Collection& c, int64_t from, const Elements& rest) {
  Ends e = EndsOf(c);
  for (int64_t pos = e.head + from; pos < e.tail; ++pos) c.Erase(kCf, PosKey(pos));
  int64_t pos = e.head + from;
  for (const std::string& v : rest) c.Put(kCf, PosKey(pos++), v);
  e.tail = pos;
  SetEnds(c, e);
  c.Save();
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
  for (std::string_view el : elements) PushOne(*c, end, el);
  c->Save();
  return c->meta().count;
}

Result<std::optional<Elements>> Store::Transaction::ListPop(int db, std::string_view key,
                                                            ListEnd end, int64_t count) {
  auto c = OpenList(*txn_, db, key, true);
  if (!c.ok()) return c.status();
  if (!c->exists()) return std::optional<Elements>();
  auto popped = PopSome(*c, end, count);
  if (!popped.ok()) return popped.status();
  if (!popped->empty()) c->Save();
  return std::optional<Elements>(std::move(*popped));
}

Result<int64_t> Store::Transaction::LLen(int db, std::string_view key) {
  auto c = OpenList(*txn_, db, key, false);
  if (!c.ok()) return c.status();
  return c->size();
}

Result<std::optional<std::string>> Store::Transaction::LIndex(int db, std::string_view key,
                                                              int64_t index) {
  Txn::SnapshotReads one_state(*txn_);  // the metadata and the element of one moment
  auto c = OpenList(*txn_, db, key, false);
  if (!c.ok()) return c.status();
  const int64_t i = Normalize(index, c->size());
  if (i < 0 || i >= c->size()) return std::optional<std::string>();
  std::string value;
  bool found = false;
  if (Status s = c->Get(kCf, PosKey(EndsOf(*c).head + i), &value, &found); !s.ok()) return s;
  if (!found) return Status::Corruption("list element missing");
  return std::optional<std::string>(std::move(value));
}

Status Store::Transaction::LSet(int db, std::string_view key, int64_t index,
                                std::string_view element) {
  auto c = OpenList(*txn_, db, key, true);
  if (!c.ok()) return c.status();
  if (!c->exists()) return Status::NoSuchKey();
  const int64_t i = Normalize(index, c->size());
  if (i < 0 || i >= c->size()) return Status::InvalidArgument("index out of range");
  c->Put(kCf, PosKey(EndsOf(*c).head + i), element);
  return Status::Ok();
}

Result<Elements> Store::Transaction::LRange(int db, std::string_view key, int64_t start,
                                            int64_t stop) {
  Txn::SnapshotReads one_state(*txn_);  // the metadata and elements of one moment
  auto c = OpenList(*txn_, db, key, false);
  if (!c.ok()) return c.status();
  if (!ClampRange(c->size(), &start, &stop)) return Elements{};
  return ReadRange(*c, start, stop - start + 1);
}

Status Store::Transaction::LTrim(int db, std::string_view key, int64_t start, int64_t stop) {
  auto c = OpenList(*txn_, db, key, true);
  if (!c.ok()) return c.status();
  if (!c->exists()) return Status::Ok();
  const int64_t len = c->size();
  Ends e = EndsOf(*c);
  Ends keep{e.tail, e.tail};  // nothing, unless the range is non-empty
  if (ClampRange(len, &start, &stop)) keep = Ends{e.head + start, e.head + stop + 1};
  if (keep.head == e.head && keep.tail == e.tail) return Status::Ok();
  for (int64_t pos = e.head; pos < keep.head; ++pos) c->Erase(kCf, PosKey(pos));
  for (int64_t pos = keep.tail; pos < e.tail; ++pos) c->Erase(kCf, PosKey(pos));
  SetEnds(*c, keep);
  c->Save();
  return Status::Ok();
}

Result<int64_t> Store::Transaction::LRem(int db, std::string_view key, int64_t count,
                                         std::string_view element) {
  auto c = OpenList(*txn_, db, key, true);
  if (!c.ok()) return c.status();
  if (!c->exists()) return int64_t{0};
  auto all = ReadRange(*c, 0, c->size());
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
  RewriteFrom(*c, static_cast<int64_t>(first), rest);
  return static_cast<int64_t>(removed);
}

Result<int64_t> Store::Transaction::LInsert(int db, std::string_view key, bool after,
                                            std::string_view pivot, std::string_view element) {
  auto c = OpenList(*txn_, db, key, true);
  if (!c.ok()) return c.status();
  if (!c->exists()) return int64_t{0};
  auto all = ReadRange(*c, 0, c->size());
  if (!all.ok()) return all.status();
  Elements& v = *all;
  auto it = std::find(v.begin(), v.end(), pivot);
  if (it == v.end()) return int64_t{-1};
  const int64_t at = (it - v.begin()) + (after ? 1 : 0);
  if (at == 0) {
    PushOne(*c, ListEnd::kLeft, element);
    c->Save();
    return c->meta().count;
  }
  Elements rest;
  rest.reserve(v.size() - static_cast<size_t>(at) + 1);
  rest.emplace_back(element);
  for (size_t i = static_cast<size_t>(at); i < v.size(); ++i) rest.push_back(std::move(v[i]));
  RewriteFrom(*c, at, rest);
  return c->meta().count;
}

Result<std::vector<int64_t>> Store::Transaction::LPos(int db, std::string_view key,
                                                      std::string_view element, int64_t rank,
                                                      int64_t count, int64_t maxlen) {
  Txn::SnapshotReads one_state(*txn_);  // the metadata and elements of one moment
  auto c = OpenList(*txn_, db, key, false);
  if (!c.ok()) return c.status();
  std::vector<int64_t> out;
  if (!c->exists()) return out;
  const bool from_tail = rank < 0;
  // -INT64_MIN overflows in Redis and stays negative: every match qualifies, as for rank -1.
  const uint64_t skip = rank == std::numeric_limits<int64_t>::min()
                            ? 0
                            : (from_tail ? static_cast<uint64_t>(-rank) : rank) - 1;
  const int64_t len = c->size();
  uint64_t matches = 0;
  auto it = c->NewIterator(kCf);
  if (from_tail) {
    it->SeekToLast();
  } else {
    it->SeekToFirst();
  }
  for (int64_t n = 0; it->Valid() && (maxlen == 0 || n < maxlen); ++n) {
    if (it->value().ToStringView() == element && matches++ >= skip) {
      out.push_back(from_tail ? len - 1 - n : n);
      if (count != 0 && static_cast<int64_t>(out.size()) >= count) break;
    }
    if (from_tail) {
      it->Prev();
    } else {
      it->Next();
    }
  }
  if (!it->status().ok()) return internal::FromRocks(it->status());
  return out;
}

Result<std::optional<std::string>> Store::Transaction::LMove(int db, std::string_view src,
                                                             std::string_view dst, ListEnd from,
                                                             ListEnd to) {
  auto s = OpenList(*txn_, db, src, true);
  if (!s.ok()) return s.status();
  if (!s->exists()) return std::optional<std::string>();
  if (src == dst) {
    auto popped = PopSome(*s, from, 1);
    if (!popped.ok()) return popped.status();
    PushOne(*s, to, popped->front());
    s->Save();
    return std::optional<std::string>(std::move(popped->front()));
  }
  auto d = OpenList(*txn_, db, dst, true);
  if (!d.ok()) return d.status();
  auto popped = PopSome(*s, from, 1);
  if (!popped.ok()) return popped.status();
  d->Create();
  PushOne(*d, to, popped->front());
  s->Save();
  d->Save();
  return std::optional<std::string>(std::move(popped->front()));
}

Result<std::optional<std::pair<std::string, Elements>>> Store::Transaction::LMPop(
    int db, std::span<const std::string_view> keys, ListEnd end, int64_t count) {
  using Popped = std::optional<std::pair<std::string, Elements>>;
  for (std::string_view key : keys) {
    auto c = OpenList(*txn_, db, key, true);
    if (!c.ok()) return c.status();
    if (!c->exists()) continue;
    auto popped = PopSome(*c, end, count);
    if (!popped.ok()) return popped.status();
    c->Save();
    return Popped(std::make_pair(std::string(key), std::move(*popped)));
  }
  return Popped();
}

}  // namespace sluice
