#include "hash_body.h"

#include <algorithm>
#include <utility>

#include "store_impl.h"
#include "txn.h"

namespace sluice::internal {
namespace {

constexpr ElementCf kCf = ElementCf::kHash;
constexpr size_t kSeqBytes = 8;

// A big hash's next insertion number: the metadata's extra, 8 bytes LE.
uint64_t NextSeq(const CollectionMeta& m) {
  uint64_t v = 0;
  for (size_t i = 0; i < m.extra.size() && i < 8; ++i) {
    v |= uint64_t{static_cast<unsigned char>(m.extra[i])} << (8 * i);
  }
  return v;
}

void SetNextSeq(CollectionMeta& m, uint64_t seq) {
  m.extra.clear();
  for (int i = 0; i < 8; ++i) m.extra.push_back(static_cast<char>(seq >> (8 * i)));
}

std::string EncodeField(uint64_t seq, std::string_view value) {
  std::string out;
  out.reserve(kSeqBytes + value.size());
  for (int i = 7; i >= 0; --i) out.push_back(static_cast<char>(seq >> (8 * i)));
  out.append(value);
  return out;
}

uint64_t SeqOf(std::string_view stored) {
  uint64_t v = 0;
  for (size_t i = 0; i < kSeqBytes && i < stored.size(); ++i) {
    v = (v << 8) | static_cast<unsigned char>(stored[i]);
  }
  return v;
}

// Steps through an inline hash's bytes: calls visit(field, value) for each field in order until
// it returns false. A damaged record ends the walk where it stops making sense.
template <typename Visit>
void ForEachInline(std::string_view extra, Visit&& visit) {
  size_t at = 0;
  uint64_t len = 0;
  while (at < extra.size()) {
    if (!ReadVarint(extra, &at, &len) || len > extra.size() - at) return;
    const std::string_view field = extra.substr(at, len);
    at += len;
    if (!ReadVarint(extra, &at, &len) || len > extra.size() - at) return;
    const std::string_view value = extra.substr(at, len);
    at += len;
    if (!visit(field, value)) return;
  }
}

size_t InlineBytes(std::string_view field, std::string_view value) {
  return VarintLength(field.size()) + field.size() + VarintLength(value.size()) + value.size();
}

}  // namespace

std::string_view HashFieldValue(std::string_view stored) {
  return stored.size() < kSeqBytes ? std::string_view() : stored.substr(kSeqBytes);
}

HashBody::HashBody(Collection& h)
    : h_(h),
      max_fields_(h.txn().impl().options().hash_inline_max_fields),
      max_bytes_(h.txn().impl().options().hash_inline_max_bytes),
      // A Created hash (count 0) starts inline; a stored one says which it is.
      inline_((h.meta().flags & kMetaInline) != 0 || (h.meta().count == 0 && max_fields_ > 0)) {}

HashBody::FieldValues& HashBody::Fields() {
  if (!fields_) {
    fields_.emplace();
    ForEachInline(h_.meta().extra, [&](std::string_view f, std::string_view v) {
      fields_->emplace_back(f, v);
      return true;
    });
  }
  return *fields_;
}

Result<std::optional<std::string>> HashBody::Get(std::string_view field) {
  std::optional<std::string> out;
  if (inline_ && fields_) {
    for (const auto& [f, v] : *fields_) {
      if (f == field) return std::optional<std::string>(v);
    }
    return out;
  }
  if (inline_) {
    ForEachInline(h_.meta().extra, [&](std::string_view f, std::string_view v) {
      if (f != field) return true;
      out.emplace(v);
      return false;
    });
    return out;
  }
  std::string stored;
  bool found = false;
  if (Status s = h_.Get(kCf, field, &stored, &found); !s.ok()) return s;
  if (found) out.emplace(HashFieldValue(stored));
  return out;
}

// A job hash of a queue (BullMQ: ~10 fields, each HSET / HINCRBY / HMSET a round trip of its
// scripts) changes a field or two at a time: decoding every field into strings and encoding them
// all again on Save was most of such a call's own work.
std::optional<bool> HashBody::SetInPlace(std::string_view field, std::string_view value) {
  std::string& extra = h_.meta().extra;
  size_t value_at = 0;   // where the field's value length starts
  size_t value_end = 0;  // where its value ends
  size_t walked_to = 0;  // the end of the last pair read
  bool found = false;
  ForEachInline(extra, [&](std::string_view f, std::string_view v) {
    walked_to = static_cast<size_t>(v.data() + v.size() - extra.data());
    if (f != field) return true;
    value_at = static_cast<size_t>(f.data() + f.size() - extra.data());
    value_end = walked_to;
    found = true;
    return false;
  });
  thread_local std::string encoded;
  encoded.clear();
  if (!found) {
    if (walked_to != extra.size()) return std::nullopt;  // a damaged record: decoded, as before
    AppendVarint(&encoded, field.size());
    encoded.append(field);
  }
  AppendVarint(&encoded, value.size());
  encoded.append(value);
  if (found) {
    extra.replace(value_at, value_end - value_at, encoded);
    return false;
  }
  extra.append(encoded);
  h_.meta().count += 1;
  return true;
}

Result<bool> HashBody::Set(std::string_view field, std::string_view value) {
  if (inline_ && !fields_) {
    if (std::optional<bool> added = SetInPlace(field, value)) return *added;
  }
  if (inline_) {
    FieldValues& fields = Fields();
    for (auto& [f, v] : fields) {
      if (f == field) {
        v.assign(value);
        return false;
      }
    }
    fields.emplace_back(field, value);
    h_.meta().count += 1;
    return true;
  }
  std::string stored;
  bool found = false;
  if (Status s = h_.Get(kCf, field, &stored, &found); !s.ok()) return s;
  uint64_t seq = 0;
  if (found) {
    seq = SeqOf(stored);
  } else {
    seq = NextSeq(h_.meta());
    SetNextSeq(h_.meta(), seq + 1);
    h_.meta().count += 1;
  }
  h_.Put(kCf, field, EncodeField(seq, value));
  return !found;
}

Result<bool> HashBody::Erase(std::string_view field) {
  if (inline_) {
    FieldValues& fields = Fields();
    const auto at = std::find_if(fields.begin(), fields.end(),
                                 [&](const auto& fv) { return fv.first == field; });
    if (at == fields.end()) return false;
    fields.erase(at);
    h_.meta().count -= 1;
    return true;
  }
  std::string stored;
  bool found = false;
  if (Status s = h_.Get(kCf, field, &stored, &found); !s.ok()) return s;
  if (!found) return false;
  h_.Erase(kCf, field);
  h_.meta().count -= 1;
  return true;
}

Result<HashBody::FieldValues> HashBody::All() {
  FieldValues out;
  if (inline_ && fields_) return *fields_;
  if (inline_) {
    out.reserve(static_cast<size_t>(std::max<int64_t>(h_.meta().count, 0)));
    ForEachInline(h_.meta().extra, [&](std::string_view f, std::string_view v) {
      out.emplace_back(f, v);
      return true;
    });
    return out;
  }
  std::vector<std::pair<uint64_t, std::pair<std::string, std::string>>> rows;
  auto it = h_.NewIterator(kCf);
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const std::string_view stored = it->value().ToStringView();
    rows.push_back({SeqOf(stored),
                    {std::string(h_.ElementOf(it->key())), std::string(HashFieldValue(stored))}});
  }
  if (!it->status().ok()) return FromRocks(it->status());
  std::sort(rows.begin(), rows.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  out.reserve(rows.size());
  for (auto& r : rows) out.push_back(std::move(r.second));
  return out;
}

bool HashBody::FitsInline() const {
  if ((h_.meta().flags & kMetaBigEncoding) != 0) return false;
  if (!fields_) {  // the metadata's bytes are the fields, encoded
    return h_.meta().count <= max_fields_ && h_.meta().extra.size() <= max_bytes_;
  }
  if (static_cast<int64_t>(fields_->size()) > max_fields_) return false;
  size_t n = 0;
  for (const auto& [f, v] : *fields_) {
    n += InlineBytes(f, v);
    if (n > max_bytes_) return false;
  }
  return true;
}

void HashBody::MoveToBig() {
  uint64_t seq = 0;
  for (const auto& [f, v] : *fields_) h_.Put(kCf, f, EncodeField(seq++, v));
  SetNextSeq(h_.meta(), seq);
  fields_.reset();
  inline_ = false;
  h_.meta().flags &= static_cast<uint8_t>(~kMetaInline);
}

void HashBody::Save() {
  CollectionMeta& m = h_.meta();
  if (inline_ && !fields_ && FitsInline()) {  // edited in place, or not at all
    m.flags |= kMetaInline;
  } else if (inline_) {
    Fields();
    if (!FitsInline()) {
      MoveToBig();
    } else {
      m.flags |= kMetaInline;
      m.count = static_cast<int64_t>(fields_->size());
      m.extra.clear();
      for (const auto& [f, v] : *fields_) {
        AppendVarint(&m.extra, f.size());
        m.extra.append(f);
        AppendVarint(&m.extra, v.size());
        m.extra.append(v);
      }
    }
  }
  h_.Save();
}

}  // namespace sluice::internal
