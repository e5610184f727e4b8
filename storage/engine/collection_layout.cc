// The collection layout's codec (collection_layout.h): metadata payloads and element sub-keys.
#include "collection_layout.h"

namespace sluice::internal {
namespace {

constexpr size_t kMetaFixedBytes = 17;  // version 8, count 8, flags 1

// `bytes` (<= 8) low bytes of v, most significant first: one append, not one per byte.
void PutBe(uint64_t v, int bytes, std::string* out) {
  char buf[8];
  for (int i = 0; i < bytes; ++i) buf[i] = static_cast<char>(v >> (8 * (bytes - 1 - i)));
  out->append(buf, static_cast<size_t>(bytes));
}
uint64_t GetBe(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

}  // namespace

std::string EncodeMeta(const CollectionMeta& m) {
  std::string out;
  EncodeMetaTo(m, &out);
  return out;
}

void EncodeMetaTo(const CollectionMeta& m, std::string* out) {
  out->clear();
  out->reserve(kMetaFixedBytes + m.extra.size());
  AppendFixed64(out, m.version);
  AppendFixed64(out, static_cast<uint64_t>(m.count));
  out->push_back(static_cast<char>(m.flags));
  out->append(m.extra);
}

std::optional<CollectionMeta> DecodeMeta(std::string_view payload) {
  if (payload.size() < kMetaFixedBytes) return std::nullopt;
  CollectionMeta m;
  m.version = DecodeFixed64(payload.data());
  m.count = static_cast<int64_t>(DecodeFixed64(payload.data() + 8));
  m.flags = static_cast<uint8_t>(payload[16]);
  m.extra.assign(payload.substr(kMetaFixedBytes));
  return m;
}

void EncodeSubKeyPrefix(int db, std::string_view user_key, uint64_t version, std::string* out) {
  const uint16_t slot = KeySlot(user_key);
  out->clear();
  out->reserve(kKeyPrefixBytes + 4 + user_key.size() + 8);
  out->push_back(static_cast<char>(db));
  PutBe(slot, 2, out);
  PutBe(user_key.size(), 4, out);
  out->append(user_key);
  PutBe(version, 8, out);
}

bool DecodeSubKey(std::string_view sub_key, std::string* meta_key, uint64_t* version,
                  std::string_view* element) {
  if (sub_key.size() < kKeyPrefixBytes + 4) return false;
  const uint64_t key_len = GetBe(sub_key.data() + kKeyPrefixBytes, 4);
  const size_t key_at = kKeyPrefixBytes + 4;
  if (sub_key.size() < key_at + key_len + 8) return false;
  meta_key->assign(sub_key.substr(0, kKeyPrefixBytes));
  meta_key->append(sub_key.substr(key_at, key_len));
  *version = GetBe(sub_key.data() + key_at + key_len, 8);
  *element = sub_key.substr(key_at + key_len + 8);
  return true;
}

std::string PrefixEnd(std::string_view prefix) {
  std::string end(prefix);
  while (!end.empty()) {
    auto last = static_cast<unsigned char>(end.back());
    if (last != 0xff) {
      end.back() = static_cast<char>(last + 1);
      return end;
    }
    end.pop_back();
  }
  return end;
}

uint32_t ElementCfsOf(ValueKind kind) {
  auto bit = [](ElementCf cf) { return 1u << static_cast<int>(cf); };
  switch (kind) {
    case ValueKind::kHash:
      return bit(ElementCf::kHash);
    case ValueKind::kSet:
      return bit(ElementCf::kSet);
    case ValueKind::kList:
      return bit(ElementCf::kList);
    case ValueKind::kZSet:
      return bit(ElementCf::kZSet) | bit(ElementCf::kZScore);
    case ValueKind::kStream:
      return bit(ElementCf::kStream);
    default:
      return 0;
  }
}

}  // namespace sluice::internal
