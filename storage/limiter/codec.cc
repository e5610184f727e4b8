// Decimal text and varint codecs shared by the limiter state formats (see internal.h).
#include "internal.h"

namespace sluice::limiter::internal {

bool ParseDecimal(std::string_view s, int64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  size_t i = 0;
  bool negative = false;
  if (s[0] == '-') {
    negative = true;
    i = 1;
    if (s.size() == 1) return false;
  }
  // No leading zeros, except the single digit "0" ("-0" is rejected, as Redis does).
  if (s[i] == '0') {
    if (s.size() == 1) {
      *out = 0;
      return true;
    }
    return false;
  }
  // Accumulate as a negative number so INT64_MIN is representable.
  int64_t v = 0;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c < '0' || c > '9') return false;
    if (__builtin_mul_overflow(v, 10, &v)) return false;
    if (__builtin_sub_overflow(v, c - '0', &v)) return false;
  }
  if (!negative) {
    if (v == std::numeric_limits<int64_t>::min()) return false;
    v = -v;
  }
  *out = v;
  return true;
}

void PutVarint(std::string* dst, uint64_t v) {
  while (v >= 0x80) {
    dst->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  dst->push_back(static_cast<char>(v));
}

bool GetVarint(std::string_view* src, uint64_t* v) {
  uint64_t result = 0;
  for (int i = 0; i < 10; ++i) {
    if (i >= static_cast<int>(src->size())) return false;
    uint64_t byte = static_cast<unsigned char>((*src)[i]);
    // The tenth byte may only carry the top bit of a 64-bit value.
    if (i == 9 && byte > 1) return false;
    result |= (byte & 0x7f) << (7 * i);
    if ((byte & 0x80) == 0) {
      src->remove_prefix(i + 1);
      *v = result;
      return true;
    }
  }
  return false;
}

bool GetVarintI64(std::string_view* src, int64_t* v) {
  uint64_t u = 0;
  if (!GetVarint(src, &u) || u > static_cast<uint64_t>(kI64Max)) return false;
  *v = static_cast<int64_t>(u);
  return true;
}

}  // namespace sluice::limiter::internal
