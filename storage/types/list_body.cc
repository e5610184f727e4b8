#include "list_body.h"

#include <algorithm>
#include <utility>

#include "store_impl.h"
#include "txn.h"

namespace sluice::internal {
namespace {

constexpr ElementCf kCf = ElementCf::kList;

// The element key of a position: order-preserving for every int64.
std::string PosKey(int64_t pos) {
  const uint64_t u = static_cast<uint64_t>(pos) ^ (uint64_t{1} << 63);
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(u >> (8 * (7 - i)));
  return out;
}

// Whether `elements` fit the inline layout's limits.
template <typename Container>
bool FitsInline(const Container& elements, int64_t max_entries, size_t max_bytes) {
  if (static_cast<int64_t>(elements.size()) > max_entries) return false;
  size_t n = 0;
  for (const auto& e : elements) {
    n += VarintLength(e.size()) + e.size();
    if (n > max_bytes) return false;
  }
  return true;
}

}  // namespace

ListBody::ListBody(Collection& c)
    : c_(c),
      max_entries_(c.txn().impl().options().list_inline_max_entries),
      max_bytes_(c.txn().impl().options().list_inline_max_bytes),
      // A Created list (count 0) starts inline; a stored one says which it is.
      inline_((c.meta().flags & kMetaInline) != 0 || c.meta().count == 0) {
  if (inline_) {
    LoadInline();
  } else {
    const std::string& e = c_.meta().extra;
    if (e.size() >= 16) {  // a big list's ends (shorter: damaged; read as empty)
      ends_ = Ends{static_cast<int64_t>(DecodeFixed64(e.data())),
                   static_cast<int64_t>(DecodeFixed64(e.data() + 8))};
    }
  }
}

void ListBody::LoadInline() {
  const std::string_view extra = c_.meta().extra;
  size_t at = 0;
  uint64_t len = 0;
  while (at < extra.size() && ReadVarint(extra, &at, &len) && len <= extra.size() - at) {
    items().emplace_back(extra.substr(at, len));
    at += len;
  }
}

int64_t ListBody::size() const {
  if (!inline_) return ends_.tail - ends_.head;
  return items_ ? static_cast<int64_t>(items_->size()) : 0;
}

Result<std::string> ListBody::At(int64_t index) {
  if (inline_) return items()[static_cast<size_t>(index)];
  std::string value;
  bool found = false;
  if (Status s = c_.Get(kCf, PosKey(ends_.head + index), &value, &found); !s.ok()) return s;
  if (!found) return Status::Corruption("list element missing");
  return value;
}

Result<ListBody::Elements> ListBody::Range(int64_t from, int64_t n) {
  Elements out;
  n = std::min(n, size() - from);
  if (n <= 0) return out;
  out.reserve(static_cast<size_t>(n));
  if (inline_) {
    const auto first = items().begin() + from;
    out.assign(first, first + n);
    return out;
  }
  auto it = c_.NewIterator(kCf);
  it->Seek(c_.SubKey(PosKey(ends_.head + from)));
  for (; it->Valid() && n > 0; it->Next(), --n) out.push_back(it->value().ToString());
  if (!it->status().ok()) return FromRocks(it->status());
  return out;
}

Status ListBody::Visit(bool from_tail,
                       const std::function<bool(int64_t, std::string_view)>& visit) {
  const int64_t len = size();
  if (inline_) {
    for (int64_t n = 0; n < len; ++n) {
      const int64_t i = from_tail ? len - 1 - n : n;
      if (!visit(i, items()[static_cast<size_t>(i)])) break;
    }
    return Status::Ok();
  }
  auto it = c_.NewIterator(kCf);
  if (from_tail) {
    it->SeekToLast();
  } else {
    it->SeekToFirst();
  }
  for (int64_t n = 0; it->Valid(); ++n) {
    if (!visit(from_tail ? len - 1 - n : n, it->value().ToStringView())) break;
    if (from_tail) {
      it->Prev();
    } else {
      it->Next();
    }
  }
  return it->status().ok() ? Status::Ok() : FromRocks(it->status());
}

void ListBody::Set(int64_t index, std::string_view element) {
  if (inline_) {
    items()[static_cast<size_t>(index)].assign(element);
  } else {
    c_.Put(kCf, PosKey(ends_.head + index), element);
  }
}

void ListBody::Push(End end, std::string_view element) {
  if (inline_) {
    if (end == End::kLeft) {
      items().emplace_front(element);
    } else {
      items().emplace_back(element);
    }
  } else if (end == End::kLeft) {
    ends_.head -= 1;
    c_.Put(kCf, PosKey(ends_.head), element);
  } else {
    c_.Put(kCf, PosKey(ends_.tail), element);
    ends_.tail += 1;
  }
}

Result<std::string> ListBody::Pop(End end) {
  shrank_ = true;
  if (inline_) {
    std::string out;
    if (end == End::kLeft) {
      out = std::move(items().front());
      items().pop_front();
    } else {
      out = std::move(items().back());
      items().pop_back();
    }
    return out;
  }
  const int64_t pos = end == End::kLeft ? ends_.head : ends_.tail - 1;
  // The next pops from this end read the next positions: a run (Collection::GetInRun).
  std::string value;
  bool found = false;
  const std::string key = PosKey(pos);
  if (Status s = c_.GetInRun(kCf, key, PosKey(ends_.head), PosKey(ends_.tail), end == End::kRight,
                             &value, &found);
      !s.ok()) {
    return s;
  }
  if (!found) return Status::Corruption("list element missing");
  c_.Erase(kCf, key);
  if (end == End::kLeft) {
    ends_.head += 1;
  } else {
    ends_.tail -= 1;
  }
  return value;
}

void ListBody::Keep(int64_t from, int64_t to) {
  if (from == 0 && to == size()) return;
  shrank_ = true;
  if (inline_) {
    items().erase(items().begin() + to, items().end());
    items().erase(items().begin(), items().begin() + from);
    return;
  }
  const Ends keep{ends_.head + from, ends_.head + to};
  for (int64_t pos = ends_.head; pos < keep.head; ++pos) c_.Erase(kCf, PosKey(pos));
  for (int64_t pos = keep.tail; pos < ends_.tail; ++pos) c_.Erase(kCf, PosKey(pos));
  ends_ = keep;
}

void ListBody::ReplaceFrom(int64_t from, Elements rest) {
  shrank_ = true;
  if (inline_) {
    items().erase(items().begin() + from, items().end());
    for (std::string& v : rest) items().push_back(std::move(v));
    return;
  }
  for (int64_t pos = ends_.head + from; pos < ends_.tail; ++pos) c_.Erase(kCf, PosKey(pos));
  int64_t pos = ends_.head + from;
  for (const std::string& v : rest) c_.Put(kCf, PosKey(pos++), v);
  ends_.tail = pos;
}

Status ListBody::Save() {
  if (inline_ && !FitsInline(items(), max_entries_, max_bytes_)) {
    MoveToBig();
  } else if (!inline_ && shrank_ && size() > 0) {
    if (Status s = MaybeMoveInline(); !s.ok()) return s;
  }
  if (inline_) {
    SaveInline();
    return Status::Ok();
  }
  CollectionMeta& m = c_.meta();
  m.extra.clear();
  AppendFixed64(&m.extra, static_cast<uint64_t>(ends_.head));
  AppendFixed64(&m.extra, static_cast<uint64_t>(ends_.tail));
  m.count = size();
  c_.Save();
  return Status::Ok();
}

void ListBody::SaveInline() {
  CollectionMeta& m = c_.meta();
  m.flags |= kMetaInline;
  m.count = static_cast<int64_t>(items().size());
  m.extra.clear();
  for (const std::string& e : items()) {
    AppendVarint(&m.extra, e.size());
    m.extra.append(e);
  }
  c_.Save();
}

void ListBody::MoveToBig() {
  int64_t pos = 0;
  for (const std::string& e : items()) c_.Put(kCf, PosKey(pos++), e);
  ends_ = Ends{0, pos};
  items().clear();
  inline_ = false;
  c_.meta().flags &= static_cast<uint8_t>(~kMetaInline);
}

Status ListBody::MaybeMoveInline() {
  if (size() > max_entries_ / 2) return Status::Ok();
  Result<Elements> all = Range(0, size());
  if (!all.ok()) return all.status();
  if (!FitsInline(*all, max_entries_ / 2, max_bytes_ / 2)) return Status::Ok();
  c_.Renew();  // the element entries of the big layout's version are left behind
  items().assign(std::make_move_iterator(all->begin()), std::make_move_iterator(all->end()));
  inline_ = true;
  return Status::Ok();
}

}  // namespace sluice::internal
