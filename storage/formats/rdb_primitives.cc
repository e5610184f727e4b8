#include "storage/formats/rdb_primitives.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <optional>

#include "storage/formats/lzf.h"

namespace sluice::formats {

namespace {

// The top two bits of a length's first byte.
constexpr uint8_t kLen6Bit = 0, kLen14Bit = 1, kLenSpecial = 3;
constexpr uint8_t kLen32Bit = 0x80, kLen64Bit = 0x81;
// Special string encodings (the low 6 bits after kLenSpecial).
constexpr uint64_t kEncInt8 = 0, kEncInt16 = 1, kEncInt32 = 2, kEncLzf = 3;
// Strings longer than this are tried with LZF when written (as Redis does).
constexpr size_t kCompressAbove = 20;

bool ReadLzfString(ByteReader& in, std::string* out) {
  uint64_t compressed_len = 0, plain_len = 0;
  std::string_view data;
  if (!ReadLength(in, &compressed_len) || !ReadLength(in, &plain_len)) return false;
  // Redis refuses an empty result; a huge claimed length must not allocate before checking.
  if (plain_len == 0 || compressed_len > in.remaining()) return false;
  if (plain_len > compressed_len * 1024 + 1024) return false;  // LZF expands at most ~1:264
  if (!in.ReadBytes(compressed_len, &data)) return false;
  return LzfDecompress(data, plain_len, out);
}

}  // namespace

void AppendLittleEndian(uint64_t v, size_t width, std::string* out) {
  for (size_t i = 0; i < width; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

int64_t SignExtend(uint64_t v, unsigned bits) {
  const unsigned shift = 64 - bits;
  return static_cast<int64_t>(v << shift) >> shift;
}

bool ByteReader::ReadByte(uint8_t* byte) {
  if (pos_ >= in_.size()) return false;
  *byte = static_cast<uint8_t>(in_[pos_++]);
  return true;
}

bool ByteReader::ReadBytes(size_t n, std::string_view* bytes) {
  if (n > remaining()) return false;
  *bytes = in_.substr(pos_, n);
  pos_ += n;
  return true;
}

bool ByteReader::ReadLittleEndian(size_t width, uint64_t* value) {
  std::string_view b;
  if (!ReadBytes(width, &b)) return false;
  *value = 0;
  for (size_t i = 0; i < width; ++i) *value |= uint64_t{static_cast<uint8_t>(b[i])} << (8 * i);
  return true;
}

bool ByteReader::ReadBigEndian(size_t width, uint64_t* value) {
  std::string_view b;
  if (!ReadBytes(width, &b)) return false;
  *value = 0;
  for (size_t i = 0; i < width; ++i) *value = (*value << 8) | static_cast<uint8_t>(b[i]);
  return true;
}

bool ReadLength(ByteReader& in, uint64_t* len, bool* special) {
  uint8_t first = 0;
  if (!in.ReadByte(&first)) return false;
  *special = false;
  switch (first >> 6) {
    case kLen6Bit:
      *len = first & 0x3f;
      return true;
    case kLen14Bit: {
      uint8_t second = 0;
      if (!in.ReadByte(&second)) return false;
      *len = (uint64_t{first & 0x3fu} << 8) | second;
      return true;
    }
    case kLenSpecial:
      *special = true;
      *len = first & 0x3f;
      return true;
    default:
      if (first == kLen32Bit) return in.ReadBigEndian(4, len);
      if (first == kLen64Bit) return in.ReadBigEndian(8, len);
      return false;
  }
}

bool ReadLength(ByteReader& in, uint64_t* len) {
  bool special = false;
  return ReadLength(in, len, &special) && !special;
}

bool ReadString(ByteReader& in, std::string* out) {
  uint64_t len = 0;
  bool special = false;
  if (!ReadLength(in, &len, &special)) return false;
  if (!special) {
    std::string_view bytes;
    if (!in.ReadBytes(len, &bytes)) return false;
    out->assign(bytes);
    return true;
  }
  if (len == kEncLzf) return ReadLzfString(in, out);
  size_t width = len == kEncInt8 ? 1 : len == kEncInt16 ? 2 : len == kEncInt32 ? 4 : 0;
  uint64_t raw = 0;
  if (width == 0 || !in.ReadLittleEndian(width, &raw)) return false;
  *out = std::to_string(SignExtend(raw, static_cast<unsigned>(width * 8)));
  return true;
}

bool ReadBinaryDouble(ByteReader& in, double* value) {
  uint64_t bits = 0;
  if (!in.ReadLittleEndian(8, &bits)) return false;
  *value = std::bit_cast<double>(bits);
  return true;
}

bool ReadTextDouble(ByteReader& in, double* value) {
  uint8_t len = 0;
  if (!in.ReadByte(&len)) return false;
  if (len == 253) *value = std::nan("");
  if (len == 254) *value = HUGE_VAL;
  if (len == 255) *value = -HUGE_VAL;
  if (len >= 253) return true;
  std::string_view text;
  if (!in.ReadBytes(len, &text)) return false;
  std::string copy(text);  // strtod needs a terminated string
  char* end = nullptr;
  *value = std::strtod(copy.c_str(), &end);
  return end == copy.c_str() + copy.size() && !copy.empty();
}

void WriteLength(uint64_t len, std::string* out) {
  if (len < (1 << 6)) {
    out->push_back(static_cast<char>(len));
  } else if (len < (1 << 14)) {
    out->push_back(static_cast<char>((kLen14Bit << 6) | (len >> 8)));
    out->push_back(static_cast<char>(len & 0xff));
  } else {
    const bool fits32 = len <= UINT32_MAX;
    out->push_back(static_cast<char>(fits32 ? kLen32Bit : kLen64Bit));
    const size_t width = fits32 ? 4 : 8;
    for (size_t i = width; i-- > 0;) out->push_back(static_cast<char>((len >> (8 * i)) & 0xff));
  }
}

bool ParseCanonicalInt(std::string_view s, int64_t* value) {
  if (s.empty() || s.size() > 20) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *value);
  if (ec != std::errc() || end != s.data() + s.size()) return false;
  return std::to_string(*value) == s;  // no "+1", "01", "-0"
}

void WriteString(std::string_view s, std::string* out) {
  int64_t v = 0;
  if (s.size() <= 11 && ParseCanonicalInt(s, &v)) {
    const size_t width = (v >= INT8_MIN && v <= INT8_MAX)     ? 1
                         : (v >= INT16_MIN && v <= INT16_MAX) ? 2
                         : (v >= INT32_MIN && v <= INT32_MAX) ? 4
                                                              : 0;
    if (width != 0) {
      const uint64_t enc = width == 1 ? kEncInt8 : width == 2 ? kEncInt16 : kEncInt32;
      out->push_back(static_cast<char>((kLenSpecial << 6) | enc));
      AppendLittleEndian(static_cast<uint64_t>(v), width, out);
      return;
    }
  }
  if (s.size() > kCompressAbove) {
    if (std::optional<std::string> packed = LzfCompress(s)) {
      out->push_back(static_cast<char>((kLenSpecial << 6) | kEncLzf));
      WriteLength(packed->size(), out);
      WriteLength(s.size(), out);
      out->append(*packed);
      return;
    }
  }
  WriteLength(s.size(), out);
  out->append(s);
}

void WriteBinaryDouble(double value, std::string* out) {
  AppendLittleEndian(std::bit_cast<uint64_t>(value), 8, out);
}

}  // namespace sluice::formats
