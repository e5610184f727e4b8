#include "storage/formats/rdb_object.h"

#include <cmath>
#include <cstdlib>
#include <unordered_set>
#include <utility>
#include <vector>

#include "storage/formats/packed.h"
#include "storage/formats/rdb_stream.h"

namespace sluice::formats {

namespace {

using Strings = std::vector<std::string>;

// quicklist 2 node containers.
constexpr uint64_t kQuicklistPlain = 1, kQuicklistPacked = 2;

Status Damaged(const char* what) { return Status::Corruption(what); }

// `count` strings, each at least one byte long: a count above the bytes left is damage, checked
// before anything is allocated for it.
bool ReadStrings(ByteReader& in, uint64_t count, Strings* out) {
  if (count > in.remaining()) return false;
  out->reserve(out->size() + count);
  for (uint64_t i = 0; i < count; ++i) {
    std::string s;
    if (!ReadString(in, &s)) return false;
    out->push_back(std::move(s));
  }
  return true;
}

// A string holding a packed container, decoded with `decode`, appended to *out.
bool ReadPacked(ByteReader& in, bool (*decode)(std::string_view, Strings*), Strings* out) {
  std::string blob;
  Strings entries;
  if (!ReadString(in, &blob) || !decode(blob, &entries)) return false;
  for (std::string& e : entries) out->push_back(std::move(e));
  return true;
}

bool AllDistinct(const Strings& members) {
  std::unordered_set<std::string_view> seen(members.begin(), members.end());
  return seen.size() == members.size();
}

template <typename Pairs>
bool FirstsDistinct(const Pairs& pairs) {
  std::unordered_set<std::string_view> seen;
  for (const auto& p : pairs) {
    if (!seen.insert(p.first).second) return false;
  }
  return true;
}

bool ParseScore(const std::string& text, double* score) {
  char* end = nullptr;
  *score = std::strtod(text.c_str(), &end);
  return !text.empty() && end == text.c_str() + text.size();
}

Status ReadList(uint8_t type, ByteReader& in, Strings* out) {
  uint64_t count = 0;
  if (type == kRdbListZiplist) {
    return ReadPacked(in, DecodeZiplist, out) ? Status::Ok() : Damaged("bad ziplist");
  }
  if (!ReadLength(in, &count)) return Damaged("bad list length");
  if (type == kRdbList) return ReadStrings(in, count, out) ? Status::Ok() : Damaged("bad list");
  if (count > in.remaining()) return Damaged("bad quicklist length");
  for (uint64_t node = 0; node < count; ++node) {
    uint64_t container = kQuicklistPacked;
    if (type == kRdbListQuicklist2 && !ReadLength(in, &container)) {
      return Damaged("bad quicklist node");
    }
    if (container == kQuicklistPlain) {
      if (!ReadStrings(in, 1, out)) return Damaged("bad quicklist plain node");
      continue;
    }
    if (container != kQuicklistPacked) return Damaged("bad quicklist container");
    auto decode = type == kRdbListQuicklist2 ? DecodeListpack : DecodeZiplist;
    if (!ReadPacked(in, decode, out)) return Damaged("bad quicklist node");
  }
  return Status::Ok();
}

Status ReadSet(uint8_t type, ByteReader& in, Strings* out) {
  bool ok = false;
  if (type == kRdbSet) {
    uint64_t count = 0;
    ok = ReadLength(in, &count) && ReadStrings(in, count, out);
  } else {
    ok = ReadPacked(in, type == kRdbSetIntset ? DecodeIntset : DecodeListpack, out);
  }
  if (!ok) return Damaged("bad set");
  return AllDistinct(*out) ? Status::Ok() : Damaged("duplicate set members");
}

// Flat (field, value, field, value, ...) lists as pairs; an odd count is damage.
template <typename Pair, typename Convert>
bool Pair2(Strings&& flat, std::vector<Pair>* out, Convert convert) {
  if (flat.size() % 2 != 0) return false;
  for (size_t i = 0; i < flat.size(); i += 2) {
    Pair p;
    p.first = std::move(flat[i]);
    if (!convert(flat[i + 1], &p.second)) return false;
    out->push_back(std::move(p));
  }
  return true;
}

bool MoveString(std::string& from, std::string* to) {
  *to = std::move(from);
  return true;
}

Status ReadHash(uint8_t type, ByteReader& in, WholeValue* out) {
  Strings flat;
  bool ok = false;
  if (type == kRdbHash) {
    uint64_t count = 0;
    ok = ReadLength(in, &count) && count <= in.remaining() && ReadStrings(in, count * 2, &flat);
  } else {
    ok = ReadPacked(in, type == kRdbHashZiplist ? DecodeZiplist : DecodeListpack, &flat);
  }
  if (!ok || !Pair2(std::move(flat), &out->fields, MoveString)) return Damaged("bad hash");
  return FirstsDistinct(out->fields) ? Status::Ok() : Damaged("duplicate hash fields");
}

Status ReadZSet(uint8_t type, ByteReader& in, WholeValue* out) {
  bool ok = true;
  if (type == kRdbZSet || type == kRdbZSet2) {
    uint64_t count = 0;
    ok = ReadLength(in, &count) && count <= in.remaining();
    for (uint64_t i = 0; ok && i < count; ++i) {
      std::pair<std::string, double> p;
      ok = ReadString(in, &p.first) &&
           (type == kRdbZSet2 ? ReadBinaryDouble(in, &p.second) : ReadTextDouble(in, &p.second));
      out->scored.push_back(std::move(p));
    }
  } else {
    Strings flat;
    ok = ReadPacked(in, type == kRdbZSetZiplist ? DecodeZiplist : DecodeListpack, &flat) &&
         Pair2(std::move(flat), &out->scored, ParseScore);
  }
  if (!ok) return Damaged("bad sorted set");
  for (const auto& [member, score] : out->scored) {
    if (std::isnan(score)) return Damaged("NaN score in a sorted set");
  }
  return FirstsDistinct(out->scored) ? Status::Ok() : Damaged("duplicate sorted set members");
}

ValueKind KindOf(uint8_t type) {
  switch (type) {
    case kRdbString:
      return ValueKind::kString;
    case kRdbList:
    case kRdbListZiplist:
    case kRdbListQuicklist:
    case kRdbListQuicklist2:
      return ValueKind::kList;
    case kRdbSet:
    case kRdbSetIntset:
    case kRdbSetListpack:
      return ValueKind::kSet;
    case kRdbZSet:
    case kRdbZSet2:
    case kRdbZSetZiplist:
    case kRdbZSetListpack:
      return ValueKind::kZSet;
    default:
      return ValueKind::kHash;
  }
}

bool IsEmpty(const WholeValue& v) {
  switch (v.kind) {
    case ValueKind::kString:
      return false;
    case ValueKind::kHash:
      return v.fields.empty();
    case ValueKind::kZSet:
      return v.scored.empty();
    default:
      return v.elements.empty();
  }
}

// A stream, checked whole, in the WholeValue's string (sluice/stream_whole.h).
Status ReadStreamValue(uint8_t type, ByteReader& in, WholeValue* out) {
  StreamWhole stream;
  if (Status s = ReadStream(type, in, &stream); !s.ok()) return s;
  out->kind = ValueKind::kStream;
  out->string = EncodeStreamWhole(stream);
  return Status::Ok();
}

}  // namespace

bool IsObjectType(uint8_t type) { return type <= kRdbStreamListpacks3 && type != 8; }

Status ReadObject(uint8_t type, ByteReader& in, WholeValue* out) {
  *out = WholeValue{};
  switch (type) {
    case kRdbModule:
    case kRdbModule2:
      return Status::InvalidArgument("module data type (Sluice loads no Redis modules)");
    case kRdbStreamListpacks:
    case kRdbStreamListpacks2:
    case kRdbStreamListpacks3:
      return ReadStreamValue(type, in, out);
    case kRdbHashZipmap:
      return Status::InvalidArgument("zipmap-encoded hash (written by Redis before 2.6)");
    default:
      if (!IsObjectType(type)) return Damaged("unknown object type");
  }
  out->kind = KindOf(type);
  Status s;
  switch (out->kind) {
    case ValueKind::kString:
      s = ReadString(in, &out->string) ? Status::Ok() : Damaged("bad string");
      break;
    case ValueKind::kList:
      s = ReadList(type, in, &out->elements);
      break;
    case ValueKind::kSet:
      s = ReadSet(type, in, &out->elements);
      break;
    case ValueKind::kZSet:
      s = ReadZSet(type, in, out);
      break;
    default:
      s = ReadHash(type, in, out);
  }
  if (s.ok() && IsEmpty(*out)) return Damaged("empty collection");
  return s;
}

Status ReadTypedObject(ByteReader& in, WholeValue* out) {
  uint8_t type = 0;
  if (!in.ReadByte(&type)) return Damaged("missing object type");
  return ReadObject(type, in, out);
}

void WriteTypedObject(const WholeValue& value, std::string* out) {
  switch (value.kind) {
    case ValueKind::kList:
    case ValueKind::kSet:
      out->push_back(static_cast<char>(value.kind == ValueKind::kList ? kRdbList : kRdbSet));
      WriteLength(value.elements.size(), out);
      for (const std::string& e : value.elements) WriteString(e, out);
      return;
    case ValueKind::kHash:
      out->push_back(static_cast<char>(kRdbHash));
      WriteLength(value.fields.size(), out);
      for (const auto& [field, v] : value.fields) {
        WriteString(field, out);
        WriteString(v, out);
      }
      return;
    case ValueKind::kStream: {
      // The string is EncodeStreamWhole's (ReadWhole or ReadObject made it); one that does not
      // decode cannot come from them, and is written as an empty stream.
      StreamWhole stream;
      if (!DecodeStreamWhole(value.string, &stream)) stream = StreamWhole{};
      out->push_back(static_cast<char>(kRdbStreamListpacks2));
      WriteStream(stream, out);
      return;
    }
    case ValueKind::kZSet:
      out->push_back(static_cast<char>(kRdbZSet2));
      WriteLength(value.scored.size(), out);
      for (const auto& [member, score] : value.scored) {
        WriteString(member, out);
        WriteBinaryDouble(score, out);
      }
      return;
    default:  // kString; the limiter kinds have no Redis form and never reach here
      out->push_back(static_cast<char>(kRdbString));
      WriteString(value.string, out);
  }
}

}  // namespace sluice::formats
