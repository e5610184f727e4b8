// The head of a big sorted set: a copy of its first entries in Redis's order, kept in one
// record so that ZRANGE 0 N (N below kZHeadMin) is one point read instead of an iterator.
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
// below kZHeadMin entries is dropped, and SaveZSet rebuilds it from an iterator (the first
// kZHeadMax elements) for a big set of more than kZHeadMax members that has none; a set of
// kZHeadMax members or fewer keeps none.
#include <algorithm>
#include <vector>

#include "collection.h"
#include "store_impl.h"
#include "txn.h"
#include "zset_elements.h"

namespace sluice::internal {

namespace {

struct HeadEntry {
  std::string element;
  bool minus_zero = false;
};

void PutVarint(std::string* out, size_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

bool GetVarint(std::string_view* in, size_t* v) {
  size_t result = 0;
  for (int shift = 0; shift < 35 && !in->empty(); shift += 7) {
    const auto byte = static_cast<unsigned char>(in->front());
    in->remove_prefix(1);
    result |= static_cast<size_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *v = result;
      return true;
    }
  }
  return false;
}

std::string EncodeHead(const std::vector<HeadEntry>& head) {
  std::string out;
  for (const HeadEntry& e : head) {
    PutVarint(&out, e.element.size());
    out.append(e.element);
    out.push_back(e.minus_zero ? '\1' : '\0');
  }
  return out;
}

bool DecodeHead(std::string_view in, std::vector<HeadEntry>* head) {
  head->clear();
  while (!in.empty()) {
    size_t n = 0;
    if (!GetVarint(&in, &n) || in.size() < n + 1) return false;
    head->push_back({std::string(in.substr(0, n)), in[n] == '\1'});
    in.remove_prefix(n + 1);
  }
  return true;
}

// The set's head, when it keeps one (a boundary and a readable record).
Result<bool> LoadHead(Collection& z, std::vector<HeadEntry>* head) {
  if (z.meta().extra.empty()) return false;
  std::string stored;
  bool found = false;
  if (Status s = z.Get(ElementCf::kZScore, "", &stored, &found); !s.ok()) return s;
  if (!found || !DecodeHead(stored, head) || head->empty()) return false;
  return true;
}

void StoreHead(Collection& z, const std::vector<HeadEntry>& head) {
  if (head.size() < kZHeadMin) {
    z.meta().extra.clear();  // dropped; SaveZSet rebuilds it
    return;
  }
  z.Put(ElementCf::kZScore, "", EncodeHead(head));
  z.meta().extra = head.back().element;
}

}  // namespace

Status ZHeadErase(Collection& z, std::string_view element) {
  if (z.is_inline()) return Status::Ok();  // no head: extra holds the elements
  if (z.meta().extra.empty() || element > std::string_view(z.meta().extra)) return Status::Ok();
  std::vector<HeadEntry> head;
  auto has = LoadHead(z, &head);
  if (!has.ok()) return has.status();
  if (!*has) {
    z.meta().extra.clear();
    return Status::Ok();
  }
  auto it = std::find_if(head.begin(), head.end(),
                         [&](const HeadEntry& e) { return e.element == element; });
  if (it == head.end()) return Status::Ok();
  head.erase(it);
  StoreHead(z, head);
  return Status::Ok();
}

Status ZHeadInsert(Collection& z, std::string_view element, bool minus_zero) {
  if (z.is_inline()) return Status::Ok();
  if (z.meta().extra.empty() || element > std::string_view(z.meta().extra)) return Status::Ok();
  std::vector<HeadEntry> head;
  auto has = LoadHead(z, &head);
  if (!has.ok()) return has.status();
  if (!*has) {
    z.meta().extra.clear();
    return Status::Ok();
  }
  auto it =
      std::lower_bound(head.begin(), head.end(), element,
                       [](const HeadEntry& e, std::string_view el) { return e.element < el; });
  if (it != head.end() && it->element == element) {
    it->minus_zero = minus_zero;
  } else {
    head.insert(it, HeadEntry{std::string(element), minus_zero});
  }
  if (head.size() > kZHeadMax) head.pop_back();
  StoreHead(z, head);
  return Status::Ok();
}

Status SaveZSet(Collection& z) {
  z.SettleInline();  // a set that outgrew the inline layout builds its head from the entries
  if (z.is_inline()) {
    z.Save();
    return Status::Ok();
  }
  if (z.meta().count <= static_cast<int64_t>(kZHeadMax)) {
    z.meta().extra.clear();
  } else if (z.meta().extra.empty() && (z.meta().flags & kMetaBigEncoding) != 0) {
    std::vector<HeadEntry> head;
    auto it = z.NewIterator(ElementCf::kZScore);
    for (it->SeekToFirst(); it->Valid() && head.size() < kZHeadMax; it->Next()) {
      head.push_back({std::string(z.ElementOf(it->key())), it->value() == "-"});
    }
    if (!it->status().ok()) return FromRocks(it->status());
    it.reset();
    if (head.size() == kZHeadMax) StoreHead(z, head);
  }
  z.Save();
  return Status::Ok();
}

Result<bool> ZHeadRange(Collection& z, int64_t start, int64_t stop, ScoredMembers* out) {
  if (z.is_inline() || z.meta().extra.empty() || start < 0 || stop < start) return false;
  // Read in place: ZRANGE 0 9 allocates only the members it returns.
  thread_local std::string stored;
  bool found = false;
  if (Status s = z.Get(ElementCf::kZScore, "", &stored, &found); !s.ok()) return s;
  if (!found) return false;
  std::string_view in(stored);
  out->clear();
  for (int64_t i = 0; i <= stop; ++i) {
    size_t n = 0;
    if (!GetVarint(&in, &n) || in.size() < n + 1 || n < 8) return false;  // too short: iterate
    if (i >= start) {
      const std::string_view element = in.substr(0, n);
      out->emplace_back(std::string(element.substr(8)),
                        ZScoreOfEntry(element, in[n] == '\1' ? "-" : ""));
    }
    in.remove_prefix(n + 1);
  }
  return true;
}

}  // namespace sluice::internal
