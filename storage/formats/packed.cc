#include "storage/formats/packed.h"

#include <cstdint>

#include "storage/formats/rdb_primitives.h"

namespace sluice::formats {

namespace {

// The size of a listpack entry's trailing back-length, which encodes `entry_len` 7 bits a byte.
size_t BacklenSize(uint64_t entry_len) {
  if (entry_len <= 127) return 1;
  if (entry_len < 16383) return 2;
  if (entry_len < 2097151) return 3;
  if (entry_len < 268435455) return 4;
  return 5;
}

// One listpack entry after its first byte: the string or integer it holds, and the bytes of
// encoding + data (for the back-length).
bool ReadListpackEntry(ByteReader& in, uint8_t first, std::string* out, uint64_t* entry_len) {
  uint64_t v = 0, str_len = 0;
  size_t header = 1;
  if ((first & 0x80) == 0) {  // 0xxxxxxx: a 7-bit unsigned integer
    *out = std::to_string(first & 0x7f);
    *entry_len = 1;
    return true;
  }
  if ((first & 0xc0) == 0x80) {  // 10xxxxxx: a string of up to 63 bytes
    str_len = first & 0x3f;
  } else if ((first & 0xe0) == 0xc0) {  // 110xxxxx yyyyyyyy: a 13-bit signed integer
    uint8_t low = 0;
    if (!in.ReadByte(&low)) return false;
    *out = std::to_string(SignExtend((uint64_t{first & 0x1fu} << 8) | low, 13));
    *entry_len = 2;
    return true;
  } else if ((first & 0xf0) == 0xe0) {  // 1110xxxx yyyyyyyy: a string of up to 4095 bytes
    uint8_t low = 0;
    if (!in.ReadByte(&low)) return false;
    str_len = (uint64_t{first & 0x0fu} << 8) | low;
    header = 2;
  } else if (first == 0xf0) {  // a string with a 32-bit length
    if (!in.ReadLittleEndian(4, &str_len)) return false;
    header = 5;
  } else {
    const unsigned bytes = first == 0xf1   ? 2
                           : first == 0xf2 ? 3
                           : first == 0xf3 ? 4
                           : first == 0xf4 ? 8
                                           : 0;
    if (bytes == 0 || !in.ReadLittleEndian(bytes, &v)) return false;
    *out = std::to_string(SignExtend(v, bytes * 8));
    *entry_len = 1 + bytes;
    return true;
  }
  std::string_view s;
  if (!in.ReadBytes(str_len, &s)) return false;
  out->assign(s);
  *entry_len = header + str_len;
  return true;
}

// One ziplist entry after its prev-length: the encoding byte(s) and the data.
bool ReadZiplistEntry(ByteReader& in, std::string* out) {
  uint8_t enc = 0;
  if (!in.ReadByte(&enc)) return false;
  uint64_t len = 0, v = 0;
  switch (enc >> 6) {
    case 0:
      len = enc & 0x3f;
      break;
    case 1: {
      uint8_t low = 0;
      if (!in.ReadByte(&low)) return false;
      len = (uint64_t{enc & 0x3fu} << 8) | low;
      break;
    }
    case 2:
      if (enc != 0x80 || !in.ReadBigEndian(4, &len)) return false;
      break;
    default: {
      unsigned bytes = enc == 0xc0   ? 2
                       : enc == 0xd0 ? 4
                       : enc == 0xe0 ? 8
                       : enc == 0xf0 ? 3
                       : enc == 0xfe ? 1
                                     : 0;
      if (bytes == 0) {  // 1111xxxx: an immediate 0..12 stored as xxxx - 1
        const unsigned imm = enc & 0x0f;
        if (imm < 1 || imm > 13) return false;
        *out = std::to_string(imm - 1);
        return true;
      }
      if (!in.ReadLittleEndian(bytes, &v)) return false;
      *out = std::to_string(SignExtend(v, bytes * 8));
      return true;
    }
  }
  std::string_view s;
  if (!in.ReadBytes(len, &s)) return false;
  out->assign(s);
  return true;
}

}  // namespace

bool DecodeListpack(std::string_view blob, std::vector<std::string>* out) {
  ByteReader in(blob);
  uint64_t total = 0, count = 0;
  if (!in.ReadLittleEndian(4, &total) || !in.ReadLittleEndian(2, &count)) return false;
  if (total != blob.size()) return false;
  out->clear();
  for (;;) {
    uint8_t first = 0;
    if (!in.ReadByte(&first)) return false;
    if (first == 0xff) break;
    std::string entry;
    uint64_t entry_len = 0;
    std::string_view backlen;
    if (!ReadListpackEntry(in, first, &entry, &entry_len)) return false;
    if (!in.ReadBytes(BacklenSize(entry_len), &backlen)) return false;
    out->push_back(std::move(entry));
  }
  // 65535 in the header means "count them" (more entries than 16 bits hold).
  if (count != 65535 && count != out->size()) return false;
  return in.remaining() == 0;
}

bool DecodeZiplist(std::string_view blob, std::vector<std::string>* out) {
  ByteReader in(blob);
  uint64_t total = 0, tail = 0, count = 0;
  if (!in.ReadLittleEndian(4, &total) || !in.ReadLittleEndian(4, &tail) ||
      !in.ReadLittleEndian(2, &count)) {
    return false;
  }
  if (total != blob.size() || tail >= blob.size()) return false;
  out->clear();
  for (;;) {
    uint8_t prev = 0;
    uint64_t ignored = 0;
    if (!in.ReadByte(&prev)) return false;
    if (prev == 0xff) break;
    if (prev == 0xfe && !in.ReadLittleEndian(4, &ignored)) return false;
    std::string entry;
    if (!ReadZiplistEntry(in, &entry)) return false;
    out->push_back(std::move(entry));
  }
  if (count != 65535 && count != out->size()) return false;
  return in.remaining() == 0;
}

bool DecodeIntset(std::string_view blob, std::vector<std::string>* out) {
  ByteReader in(blob);
  uint64_t width = 0, count = 0;
  if (!in.ReadLittleEndian(4, &width) || !in.ReadLittleEndian(4, &count)) return false;
  if ((width != 2 && width != 4 && width != 8) || count == 0) return false;
  if (count * width != in.remaining()) return false;
  out->clear();
  int64_t previous = 0;
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t raw = 0;
    in.ReadLittleEndian(width, &raw);
    const int64_t v = SignExtend(raw, static_cast<unsigned>(width * 8));
    if (i > 0 && v <= previous) return false;
    previous = v;
    out->push_back(std::to_string(v));
  }
  return true;
}

void ListpackBuilder::AppendBacklen(size_t entry_len) {
  // lpEncodeBacklen: 7 bits a byte, most significant first, every byte but the first with the
  // high bit set.
  const size_t n = BacklenSize(entry_len);
  for (size_t i = n; i-- > 0;) {
    uint8_t b = static_cast<uint8_t>((entry_len >> (7 * i)) & 127);
    if (i != n - 1) b |= 128;
    body_.push_back(static_cast<char>(b));
  }
}

void ListpackBuilder::AppendInteger(int64_t v) {
  const size_t start = body_.size();
  const auto u = static_cast<uint64_t>(v);
  if (v >= 0 && v <= 127) {
    body_.push_back(static_cast<char>(v));
  } else if (v >= -4096 && v <= 4095) {
    const uint64_t w = u & 0x1fff;
    body_.push_back(static_cast<char>((w >> 8) | 0xc0));
    body_.push_back(static_cast<char>(w & 0xff));
  } else {
    const size_t width = (v >= -32768 && v <= 32767)          ? 2
                         : (v >= -8388608 && v <= 8388607)    ? 3
                         : (v >= INT32_MIN && v <= INT32_MAX) ? 4
                                                              : 8;
    const char tag = width == 2 ? '\xf1' : width == 3 ? '\xf2' : width == 4 ? '\xf3' : '\xf4';
    body_.push_back(tag);
    AppendLittleEndian(u, width, &body_);
  }
  AppendBacklen(body_.size() - start);
  ++count_;
}

void ListpackBuilder::AppendString(std::string_view s) {
  int64_t v = 0;
  if (ParseCanonicalInt(s, &v)) {
    AppendInteger(v);
    return;
  }
  const size_t start = body_.size();
  if (s.size() < 64) {
    body_.push_back(static_cast<char>(0x80 | s.size()));
  } else if (s.size() < 4096) {
    body_.push_back(static_cast<char>(0xe0 | (s.size() >> 8)));
    body_.push_back(static_cast<char>(s.size() & 0xff));
  } else {
    body_.push_back('\xf0');
    AppendLittleEndian(s.size(), 4, &body_);
  }
  body_.append(s);
  AppendBacklen(body_.size() - start);
  ++count_;
}

std::string ListpackBuilder::Finish() {
  std::string out;
  AppendLittleEndian(6 + body_.size() + 1, 4, &out);
  AppendLittleEndian(count_ < 65535 ? count_ : 65535, 2, &out);
  out.append(body_);
  out.push_back('\xff');
  return out;
}

}  // namespace sluice::formats
