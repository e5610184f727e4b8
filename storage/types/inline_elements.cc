#include "inline_elements.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "encoding.h"

namespace sluice::internal {
namespace {

// One entry of the buffer, decoded in place. False at a damaged entry (the walk stops there:
// what follows is not trusted).
struct InlineEntry {
  ElementCf cf;
  std::string_view element;
  std::string_view value;
  size_t end;
};

bool ReadEntry(std::string_view buf, size_t at, InlineEntry* e) {
  if (at >= buf.size()) return false;
  e->cf = static_cast<ElementCf>(static_cast<unsigned char>(buf[at]));
  size_t p = at + 1;
  uint64_t n = 0;
  if (!ReadVarint(buf, &p, &n) || n > buf.size() - p) return false;
  e->element = buf.substr(p, n);
  p += n;
  if (!ReadVarint(buf, &p, &n) || n > buf.size() - p) return false;
  e->value = buf.substr(p, n);
  e->end = p + n;
  return true;
}

// <0, 0, >0: (cf, element) of the entry against (cf, element) wanted.
int CompareEntry(const InlineEntry& e, ElementCf cf, std::string_view element) {
  if (e.cf != cf) return static_cast<int>(e.cf) < static_cast<int>(cf) ? -1 : 1;
  return e.element.compare(element);
}

void AppendEntry(std::string* out, ElementCf cf, std::string_view element, std::string_view value) {
  out->push_back(static_cast<char>(cf));
  AppendVarint(out, element.size());
  out->append(element);
  AppendVarint(out, value.size());
  out->append(value);
}

// Iterates its own copy of the buffer, over one column family's entries whose element starts
// with a prefix; keys are prefix + element.
class InlineIterator final : public rocksdb::Iterator {
 public:
  InlineIterator(std::string sub_key_prefix, std::string entries, ElementCf cf,
                 std::string_view element_prefix)
      : prefix_(std::move(sub_key_prefix)), entries_(std::move(entries)) {
    // Views into entries_, which stays put from here on (the iterator is never moved).
    const std::string_view buf(entries_);
    size_t at = 0;
    InlineEntry e;
    while (ReadEntry(buf, at, &e)) {
      if (e.cf == cf && e.element.substr(0, element_prefix.size()) == element_prefix) {
        items_.emplace_back(e.element, e.value);
      }
      at = e.end;
    }
    at_ = items_.size();
  }

  bool Valid() const override { return at_ < items_.size(); }
  void SeekToFirst() override { Move(0); }
  void SeekToLast() override { Move(items_.empty() ? items_.size() : items_.size() - 1); }
  void Seek(const rocksdb::Slice& target) override { Move(LowerBound(target.ToStringView())); }
  void SeekForPrev(const rocksdb::Slice& target) override {
    const size_t past = UpperBound(target.ToStringView());
    Move(past == 0 ? items_.size() : past - 1);
  }
  void Next() override { Move(at_ + 1); }
  void Prev() override { Move(at_ == 0 ? items_.size() : at_ - 1); }
  rocksdb::Slice key() const override { return key_; }
  rocksdb::Slice value() const override {
    return rocksdb::Slice(items_[at_].second.data(), items_[at_].second.size());
  }
  rocksdb::Status status() const override { return rocksdb::Status::OK(); }

 private:
  void Move(size_t at) {
    at_ = std::min(at, items_.size());
    if (at_ < items_.size()) {
      key_.assign(prefix_);
      key_.append(items_[at_].first);
    }
  }
  // The first item whose key (prefix_ + element) is >= target, or > target when `after`.
  size_t LowerBound(std::string_view target) const { return Bound(target, false); }
  size_t UpperBound(std::string_view target) const { return Bound(target, true); }
  size_t Bound(std::string_view target, bool after) const {
    const std::string_view prefix(prefix_);
    const int c = target.substr(0, prefix.size()).compare(prefix);
    if (c < 0 || (c == 0 && target.size() < prefix.size())) return 0;
    if (c > 0) return items_.size();
    const std::string_view rest = target.substr(prefix.size());
    const auto before = [rest, after](const auto& item) {
      return after ? item.first <= rest : item.first < rest;
    };
    return static_cast<size_t>(std::partition_point(items_.begin(), items_.end(), before) -
                               items_.begin());
  }

  const std::string prefix_;
  const std::string entries_;
  std::vector<std::pair<std::string_view, std::string_view>> items_;
  size_t at_ = 0;
  std::string key_;
};

}  // namespace

InlineElements::Located InlineElements::Locate(ElementCf cf, std::string_view element) const {
  const std::string_view buf(buf_);
  size_t at = 0;
  InlineEntry e;
  while (ReadEntry(buf, at, &e)) {
    const int c = CompareEntry(e, cf, element);
    if (c == 0) return Located{at, e.end, true, e.value};
    if (c > 0) break;
    at = e.end;
  }
  return Located{at, at, false, {}};
}

std::optional<std::string_view> InlineElements::Find(ElementCf cf, std::string_view element) const {
  const Located l = Locate(cf, element);
  if (!l.found) return std::nullopt;
  return l.value;
}

void InlineElements::Put(ElementCf cf, std::string_view element, std::string_view value) {
  const Located l = Locate(cf, element);
  std::string entry;
  entry.reserve(element.size() + value.size() + 11);
  AppendEntry(&entry, cf, element, value);
  buf_.replace(l.at, l.end - l.at, entry);
}

void InlineElements::Erase(ElementCf cf, std::string_view element) {
  const Located l = Locate(cf, element);
  if (l.found) buf_.erase(l.at, l.end - l.at);
}

void InlineElements::ForEach(
    const std::function<void(ElementCf, std::string_view, std::string_view)>& visit) const {
  const std::string_view buf(buf_);
  size_t at = 0;
  InlineEntry e;
  while (ReadEntry(buf, at, &e)) {
    visit(e.cf, e.element, e.value);
    at = e.end;
  }
}

std::unique_ptr<rocksdb::Iterator> InlineElements::NewIterator(
    std::string_view sub_key_prefix, ElementCf cf, std::string_view element_prefix) const {
  return std::make_unique<InlineIterator>(std::string(sub_key_prefix), std::string(buf_), cf,
                                          element_prefix);
}

}  // namespace sluice::internal
