// The head of a big sorted set: a copy of its first entries in Redis's order, kept in one
// record so that ZRANGE 0 N (N below kZHeadMin) is one point read instead of an iterator, and so
// that walks from the low end start at the first live element (NewZScoreIterator).
//
// Layout (zset_elements.h): the record is the zscore element "" of the set's version (every real
// zscore element has at least the 8 score bytes, so it never collides, and Collection's zscore
// iterators start past it); the metadata's `extra` holds the head's last element (its boundary),
// or is empty when the set keeps no head. The record holds exactly the zscore elements <= the
// boundary, each as [varint length][element bytes][1 byte: 1 when the score is -0]. A boundary
// whose record is missing (a copied set: RENAME and COPY copy elements, not the record) means no
// head, as does an empty boundary.
//
// Writers keep it exact: an element inserted or erased at or below the boundary rewrites the
// record in the unit (one point read and one write; above it, nothing). A head that shrinks
// below kZHeadMin entries (emptied, it keeps its boundary: it still holds exactly the elements
// up to it) is topped up to kZHeadMax from the elements past its boundary when the set is saved,
// once per operation (an iterator that seeks there, so it never steps over what was erased
// below it, and one per bulk erase, not one per 16 elements it erased); SaveZSet builds
// the head of a big set that has none from the set's first kZHeadMax elements. Every big set
// keeps one, down to a single member: a set that keeps all of its members in its head grows it
// with every insert.
//
// The high end has no record, only a fence in the metadata (kMetaZFence): an element above which
// nothing is live. Pops from the high end leave it at the last element they took, an insert above
// it raises it, and walks from the high end seek there instead of stepping down over what the
// pops erased (a ZPOPMAX queue). Erasing anywhere else leaves it true.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collection.h"
#include "store_impl.h"
#include "txn.h"
#include "zset_elements.h"

namespace sluice::internal {

namespace {

// The metadata's extra of a big set: the head's boundary ("" when it keeps no head), then, under
// kMetaZFence, the fence. Views into z.meta().extra.
std::string_view Boundary(const Collection& z) {
  const std::string_view x = z.meta().extra;
  if ((z.meta().flags & kMetaZFence) == 0) return x;
  size_t at = 0;
  uint64_t n = 0;
  if (!ReadVarint(x, &at, &n) || n > x.size() - at) return {};  // damaged: no head
  return x.substr(at, n);
}

std::optional<std::string_view> Fence(const Collection& z) {
  if ((z.meta().flags & kMetaZFence) == 0) return std::nullopt;
  const std::string_view x = z.meta().extra;
  size_t at = 0;
  uint64_t n = 0;
  if (!ReadVarint(x, &at, &n) || n > x.size() - at || at + n == x.size()) return std::nullopt;
  return x.substr(at + n);
}

// Either may view the current extra: the new one is built before it is replaced.
void SetEnds(Collection& z, std::string_view boundary, std::optional<std::string_view> fence) {
  std::string x;
  if (fence) {
    AppendVarint(&x, boundary.size());
    x.append(boundary);
    x.append(*fence);
    z.meta().flags |= kMetaZFence;
  } else {
    x.assign(boundary);
    z.meta().flags &= static_cast<uint8_t>(~kMetaZFence);
  }
  z.meta().extra = std::move(x);
}

void SetBoundary(Collection& z, std::string_view boundary) { SetEnds(z, boundary, Fence(z)); }

// One entry of a head record, as bytes [begin, end) of the record.
struct HeadSpan {
  size_t begin = 0;
  size_t end = 0;
  std::string_view element;
};

// Calls f(span) for each entry of a head record until f returns false; false when the record
// is damaged.
template <typename F>
bool ForEachHeadSpan(std::string_view record, F&& f) {
  size_t at = 0;
  while (at < record.size()) {
    const size_t begin = at;
    uint64_t n = 0;
    if (!ReadVarint(record, &at, &n) || n >= record.size() - at) return false;  // n + 1 bytes
    const HeadSpan span{begin, at + n + 1, record.substr(at, n)};
    at = span.end;
    if (!f(span)) break;
  }
  return true;
}

// The head record in its encoded form, edited in place by ZHeadInsert and ZHeadErase: a write
// at or below the boundary decodes no entry into a string of its own (the 16-32 entries
// decoded, copied and freed per ZADD or ZREM were 4.5% of the samples under a sliding-window
// script on one key). Thread-local: one edit at a time on a thread.
struct HeadRecord {
  std::string bytes;
  size_t count = 0;
  HeadSpan last;

  // The set's head record, when it keeps a readable one (empty while an operation that erased
  // every element up to the boundary has not topped it up yet: see ZHeadErase).
  Result<bool> Load(Collection& z) {
    if (Boundary(z).empty()) return false;
    bool found = false;
    if (Status s = z.Get(ElementCf::kZScore, "", &bytes, &found); !s.ok()) return s;
    return found && Recount();
  }
  bool Recount() {
    count = 0;
    return ForEachHeadSpan(bytes, [&](const HeadSpan& span) {
      ++count;
      last = span;
      return true;
    });
  }
  // The first entry whose element is >= `element` (bytes.size() as begin when there is none).
  HeadSpan LowerBound(std::string_view element) const {
    HeadSpan at{bytes.size(), bytes.size(), {}};
    ForEachHeadSpan(bytes, [&](const HeadSpan& span) {
      if (span.element < element) return true;
      at = span;
      return false;
    });
    return at;
  }
  void InsertAt(size_t at, std::string_view element, bool minus_zero) {
    thread_local std::string entry;
    entry.clear();
    AppendVarint(&entry, element.size());
    entry.append(element);
    entry.push_back(minus_zero ? '\1' : '\0');
    bytes.insert(at, entry);
    ++count;
  }
  void Append(std::string_view element, bool minus_zero) {
    InsertAt(bytes.size(), element, minus_zero);
  }
  void Erase(const HeadSpan& span) {
    bytes.erase(span.begin, span.end - span.begin);
    --count;
  }
  void Clear() {
    bytes.clear();
    count = 0;
  }
  // Writes the record and the boundary (its last element). An emptied record keeps the old
  // boundary: it still holds exactly the elements up to it (none).
  void Store(Collection& z) {
    if (!Recount()) return SetBoundary(z, "");
    z.Put(ElementCf::kZScore, "", bytes);
    if (count > 0) SetBoundary(z, last.element);
  }
};

HeadRecord& EditedHead() {
  thread_local HeadRecord head;
  return head;
}

// Appends the elements after `boundary` ("": from the first) to *head until it holds `limit`.
Status AppendElementsPast(Collection& z, std::string_view boundary, size_t limit,
                          HeadRecord* head) {
  auto it = z.NewIterator(ElementCf::kZScore);
  if (boundary.empty()) {
    it->SeekToFirst();
  } else {
    it->Seek(z.SubKey(boundary));
    if (it->Valid() && z.ElementOf(it->key()) == boundary) it->Next();
  }
  for (; it->Valid() && head->count < limit; it->Next()) {
    head->Append(z.ElementOf(it->key()), it->value() == "-");
  }
  return it->status().ok() ? Status::Ok() : FromRocks(it->status());
}

}  // namespace

Status ZHeadErase(Collection& z, std::string_view element) {
  if (z.is_inline()) return Status::Ok();  // no head: extra holds the elements
  if (Boundary(z).empty() || element > Boundary(z)) return Status::Ok();
  HeadRecord& head = EditedHead();
  auto has = head.Load(z);
  if (!has.ok()) return has.status();
  if (!*has) {
    SetBoundary(z, "");
    return Status::Ok();
  }
  const HeadSpan at = head.LowerBound(element);
  if (at.begin == head.bytes.size() || at.element != element) return Status::Ok();
  head.Erase(at);
  // Under kZHeadMin it is topped up when the set is saved: once per operation, however many
  // elements it erases (a ZREMRANGEBYSCORE of 100k elements topped it up 6,000 times, each an
  // iterator over the unit's staged erasures: quadratic).
  if (head.count < kZHeadMin) z.set_zhead_short(true);
  head.Store(z);
  return Status::Ok();
}

namespace {

// Tops up a head that fell under kZHeadMin (ZHeadErase) from the elements past its boundary.
Status TopUpHead(Collection& z) {
  HeadRecord& head = EditedHead();
  auto has = head.Load(z);
  if (!has.ok()) return has.status();
  if (!*has) return Status::Ok();
  if (head.count >= kZHeadMin || static_cast<int64_t>(head.count) >= z.meta().count) {
    return Status::Ok();
  }
  // Every element at or below the boundary is in the head, so the next ones come from past it.
  const std::string boundary(Boundary(z));
  if (Status s = AppendElementsPast(z, boundary, kZHeadMax, &head); !s.ok()) return s;
  head.Store(z);
  return Status::Ok();
}

}  // namespace

Status ZHeadInsert(Collection& z, std::string_view element, bool minus_zero) {
  if (z.is_inline()) return Status::Ok();
  if (const auto fence = Fence(z); fence && element > *fence) SetEnds(z, Boundary(z), element);
  if (Boundary(z).empty()) return Status::Ok();
  const bool past_boundary = element > Boundary(z);
  // Past the boundary the head changes only when it holds every other member (a small set).
  if (past_boundary && z.meta().count > static_cast<int64_t>(kZHeadMax)) return Status::Ok();
  HeadRecord& head = EditedHead();
  auto has = head.Load(z);
  if (!has.ok()) return has.status();
  if (!*has) {
    SetBoundary(z, "");
    return Status::Ok();
  }
  if (past_boundary) {
    if (static_cast<int64_t>(head.count) + 1 != z.meta().count) return Status::Ok();
    head.Append(element, minus_zero);
    head.Store(z);
    return Status::Ok();
  }
  const HeadSpan at = head.LowerBound(element);
  if (at.begin != head.bytes.size() && at.element == element) {
    head.bytes[at.end - 1] = minus_zero ? '\1' : '\0';
  } else {
    head.InsertAt(at.begin, element, minus_zero);
    if (head.count > kZHeadMax) {
      head.Recount();
      head.Erase(head.last);
    }
  }
  head.Store(z);
  return Status::Ok();
}

void ZFenceAt(Collection& z, std::string_view element) {
  if (!z.is_inline()) SetEnds(z, Boundary(z), element);
}

Status SaveZSet(Collection& z) {
  if (z.zhead_short() && !z.is_inline() && z.meta().count > 0) {
    z.set_zhead_short(false);
    if (Status s = TopUpHead(z); !s.ok()) return s;
  }
  z.SettleInline();  // a set that outgrew the inline layout builds its head from the entries
  if (z.is_inline()) {
    z.Save();
    return Status::Ok();
  }
  if (Boundary(z).empty() && z.meta().count > 0 && (z.meta().flags & kMetaBigEncoding) != 0) {
    HeadRecord& head = EditedHead();
    head.Clear();
    if (Status s = AppendElementsPast(z, "", kZHeadMax, &head); !s.ok()) return s;
    if (head.count > 0) head.Store(z);
  }
  z.Save();
  return Status::Ok();
}

Result<bool> ZHeadRange(Collection& z, int64_t start, int64_t stop, ScoredMembers* out) {
  if (z.is_inline() || Boundary(z).empty() || start < 0 || stop < start) return false;
  // Read in place: ZRANGE 0 9 allocates only the members it returns.
  thread_local std::string stored;
  bool found = false;
  if (Status s = z.Get(ElementCf::kZScore, "", &stored, &found); !s.ok()) return s;
  if (!found) return false;
  out->clear();
  int64_t i = 0;
  bool usable = true;
  ForEachHeadSpan(stored, [&](const HeadSpan& span) {
    if (span.element.size() < 8) return usable = false;
    if (i >= start) {
      out->emplace_back(std::string(span.element.substr(8)),
                        ZScoreOfEntry(span.element, stored[span.end - 1] == '\1' ? "-" : ""));
    }
    return ++i <= stop;
  });
  return usable && i > stop;  // too short, or damaged before `stop`: iterate
}

namespace {

// A big sorted set's zscore elements in order (keys and values as Collection::NewIterator's),
// the elements at or below the head's boundary served from the head record, the rest from the
// elements' own iterator, which walks from the high end start at the fence when there is one. Pops
// and ZREMRANGEBYSCORE erase at the low end, and until a flush drops their deletion markers an
// iterator from the first element steps over every one of them: a sliding window's ZREMRANGEBYSCORE
// on one hot key cost more with every call. Through the head, a walk from the low end starts at the
// first live element.
//
// The record is read at the first position that needs it, the elements' iterator made at the
// first that needs it; a head that does not read back (missing or damaged) leaves every
// position to the elements' iterator. Lives within the unit's operation, like the Collection.
class HeadedZScoreIterator final : public rocksdb::Iterator {
 public:
  explicit HeadedZScoreIterator(Collection& z)
      : z_(z), boundary_(Boundary(z)), prefix_(z.SubKey("")) {
    if (const auto fence = Fence(z)) fence_key_ = z.SubKey(*fence);
  }

  bool Valid() const override {
    return in_head_ ? pos_ < head_.size() : elements_ != nullptr && elements_->Valid();
  }
  void SeekToFirst() override {
    if (HasHead()) return EnterHead(0);
    Elements().SeekToFirst();
  }
  void SeekToLast() override {
    if (fence_key_) {
      Elements().SeekForPrev(*fence_key_);
    } else {
      Elements().SeekToLast();
    }
    DescendIntoHead();
  }
  void Seek(const rocksdb::Slice& target) override {
    const std::string_view t = z_.ElementOf(target);
    if (t <= std::string_view(boundary_) && HasHead()) return EnterHead(LowerBound(t));
    Elements().Seek(target);
  }
  void SeekForPrev(const rocksdb::Slice& target) override {
    const std::string_view t = z_.ElementOf(target);
    if (t <= std::string_view(boundary_) && HasHead()) {
      const size_t above = UpperBound(t);
      return EnterHead(above == 0 ? head_.size() : above - 1);  // none at or below: invalid
    }
    Elements().SeekForPrev(fence_key_ && target.compare(*fence_key_) > 0 ? *fence_key_ : target);
    DescendIntoHead();
  }
  void Next() override {
    if (!in_head_) return elements_->Next();
    if (++pos_ < head_.size()) return EnterHead(pos_);
    in_head_ = false;  // past the head: the elements after its boundary
    Elements().Seek(z_.SubKey(boundary_));
    if (elements_->Valid() && z_.ElementOf(elements_->key()) == boundary_) elements_->Next();
  }
  void Prev() override {
    if (in_head_) return EnterHead(pos_ == 0 ? head_.size() : pos_ - 1);
    elements_->Prev();
    DescendIntoHead();
  }
  rocksdb::Slice key() const override { return in_head_ ? rocksdb::Slice(key_) : elements_->key(); }
  rocksdb::Slice value() const override {
    if (!in_head_) return elements_->value();
    return head_[pos_].minus_zero ? rocksdb::Slice("-", 1) : rocksdb::Slice();
  }
  rocksdb::Status status() const override {
    return elements_ ? elements_->status() : rocksdb::Status::OK();
  }

 private:
  struct Entry {
    std::string_view element;  // into record_
    bool minus_zero;
  };

  // Reads the record once; true when it holds the elements up to the boundary.
  bool HasHead() {
    if (!loaded_ && !boundary_.empty()) {
      loaded_ = true;
      bool found = false;
      const Status s = z_.Get(ElementCf::kZScore, "", &record_, &found);
      const bool ok = s.ok() && found && ForEachHeadSpan(record_, [&](const HeadSpan& span) {
                        head_.push_back({span.element, record_[span.end - 1] == '\1'});
                        return true;
                      });
      if (!ok || head_.empty() || head_.back().element != boundary_) head_.clear();
    }
    return !head_.empty();
  }
  rocksdb::Iterator& Elements() {
    in_head_ = false;
    if (!elements_) elements_ = z_.NewIterator(ElementCf::kZScore);
    return *elements_;
  }
  void EnterHead(size_t pos) {
    in_head_ = true;
    pos_ = pos;
    if (pos_ < head_.size()) key_.assign(prefix_).append(head_[pos_].element);
  }
  // Moving down the elements, at the head's boundary or below (or past the first): the head
  // holds the rest, so the walk goes on from its last entry rather than over erased elements.
  void DescendIntoHead() {
    if (!elements_->status().ok()) return;
    if (elements_->Valid() && z_.ElementOf(elements_->key()) > std::string_view(boundary_)) return;
    if (HasHead()) EnterHead(head_.size() - 1);
  }
  size_t LowerBound(std::string_view t) const {
    return std::lower_bound(head_.begin(), head_.end(), t,
                            [](const Entry& e, std::string_view v) { return e.element < v; }) -
           head_.begin();
  }
  size_t UpperBound(std::string_view t) const {
    return std::upper_bound(head_.begin(), head_.end(), t,
                            [](std::string_view v, const Entry& e) { return v < e.element; }) -
           head_.begin();
  }

  Collection& z_;
  const std::string boundary_;
  const std::string prefix_;
  std::optional<std::string> fence_key_;  // the fence's sub-key, when the set has one
  std::unique_ptr<rocksdb::Iterator> elements_;
  std::string record_;
  std::vector<Entry> head_;
  bool loaded_ = false;
  bool in_head_ = false;
  size_t pos_ = 0;
  std::string key_;
};

}  // namespace

std::unique_ptr<rocksdb::Iterator> NewZScoreIterator(Collection& z) {
  if (z.is_inline() || (Boundary(z).empty() && !Fence(z))) {
    return z.NewIterator(ElementCf::kZScore);
  }
  return std::make_unique<HeadedZScoreIterator>(z);
}

}  // namespace sluice::internal
