// The RDB format's building blocks: a bounds-checked reader, lengths (6/14/32/64-bit), strings
// (raw, int-encoded, LZF-compressed) and doubles (binary and the old text form), read and
// written as Redis 7.0 (RDB version 10) does. Every reader returns false on damaged or
// truncated input and never reads past the end.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sluice::formats {

// A cursor over bytes that refuses to move past their end.
class ByteReader {
 public:
  explicit ByteReader(std::string_view in) : in_(in) {}
  bool ReadByte(uint8_t* byte);
  bool ReadBytes(size_t n, std::string_view* bytes);
  bool ReadLittleEndian(size_t width, uint64_t* value);
  bool ReadBigEndian(size_t width, uint64_t* value);
  size_t remaining() const { return in_.size() - pos_; }
  size_t position() const { return pos_; }

 private:
  std::string_view in_;
  size_t pos_ = 0;
};

// A length; `*special` is set when the first byte marks a special string encoding (int or LZF)
// and `*len` is then that encoding's number (0..3).
bool ReadLength(ByteReader& in, uint64_t* len, bool* special);
// A plain length (a special encoding is an error).
bool ReadLength(ByteReader& in, uint64_t* len);
// Any string encoding, decoded to its bytes (an int-encoded string to its decimal text).
bool ReadString(ByteReader& in, std::string* out);
bool ReadBinaryDouble(ByteReader& in, double* value);  // RDB_TYPE_ZSET_2: 8 bytes, little endian
bool ReadTextDouble(ByteReader& in, double* value);    // RDB_TYPE_ZSET: length byte + text

void WriteLength(uint64_t len, std::string* out);
// Writes `s` as Redis would: int-encoded when it is a canonical integer of up to 32 bits,
// LZF-compressed when longer than 20 bytes and it shrinks, else raw.
void WriteString(std::string_view s, std::string* out);
void WriteBinaryDouble(double value, std::string* out);

// Appends the low `width` bytes of v, least significant first.
void AppendLittleEndian(uint64_t v, size_t width, std::string* out);
// The low `bits` bits of v as a two's complement signed number.
int64_t SignExtend(uint64_t v, unsigned bits);

// True when `s` is the canonical decimal form of an int64 (no sign on 0, no leading zeros or
// spaces), as Redis's string2ll accepts it; sets *value.
bool ParseCanonicalInt(std::string_view s, int64_t* value);

}  // namespace sluice::formats
