// Bit operations over a string's bytes (bitmaps.h), with Redis 7.0's semantics.
#include "bitmaps.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>

namespace sluice::bits {

namespace {

uint8_t ByteAt(std::string_view s, uint64_t i) {
  return i < s.size() ? static_cast<uint8_t>(s[i]) : 0;
}

// The bits of byte `i` that fall inside [first, last], as a mask (bit 7 = the byte's first bit).
uint8_t MaskInSpan(uint64_t i, BitSpan span) {
  uint8_t mask = 0xff;
  if (i == span.first / 8) mask &= static_cast<uint8_t>(0xff >> (span.first % 8));
  if (i == span.last / 8) mask &= static_cast<uint8_t>(0xff << (7 - span.last % 8));
  return mask;
}

uint64_t ReadUnsigned(std::string_view s, uint64_t offset, int bits) {
  uint64_t value = 0;
  for (int i = 0; i < bits; ++i) value = (value << 1) | (GetBit(s, offset + i) ? 1 : 0);
  return value;
}

int64_t ReadSigned(std::string_view s, uint64_t offset, int bits) {
  uint64_t value = ReadUnsigned(s, offset, bits);
  if (bits < 64 && (value & (uint64_t{1} << (bits - 1))) != 0) value |= ~uint64_t{0} << bits;
  return static_cast<int64_t>(value);
}

void WriteBits(std::string* s, uint64_t offset, int bits, uint64_t value) {
  for (int i = 0; i < bits; ++i) SetBit(s, offset + i, ((value >> (bits - 1 - i)) & 1) != 0);
}

using Overflow = BitFieldOp::Overflow;

// Redis's overflow rules for a `bits`-wide unsigned field holding `value` + `incr`: true when it
// overflows (either way); *limit is then what WRAP or SAT leave (FAIL writes nothing).
bool UnsignedOverflows(uint64_t value, int64_t incr, int bits, Overflow mode, uint64_t* limit) {
  const uint64_t max = (uint64_t{1} << bits) - 1;  // bits <= 63
  const auto max_incr = static_cast<int64_t>(max - value);
  const auto min_incr = static_cast<int64_t>(0 - value);
  bool up = value > max || (incr > 0 && incr > max_incr);
  bool down = !up && incr < 0 && incr < min_incr;
  if (!up && !down) return false;
  if (mode == Overflow::kWrap) {
    *limit = (value + static_cast<uint64_t>(incr)) & ~(~uint64_t{0} << bits);
  } else if (mode == Overflow::kSat) {
    *limit = up ? max : 0;
  }
  return true;
}

bool SignedOverflows(int64_t value, int64_t incr, int bits, Overflow mode, int64_t* limit) {
  const int64_t max = bits == 64 ? std::numeric_limits<int64_t>::max()
                                 : static_cast<int64_t>((uint64_t{1} << (bits - 1)) - 1);
  const int64_t min = -max - 1;
  // Wrapping differences, as Redis computes them; used only where they cannot have wrapped.
  const auto max_incr = static_cast<int64_t>(static_cast<uint64_t>(max) - value);
  const auto min_incr =
      static_cast<int64_t>(static_cast<uint64_t>(min) - static_cast<uint64_t>(value));
  const bool up =
      value > max || (bits != 64 && incr > max_incr) || (value >= 0 && incr > 0 && incr > max_incr);
  const bool down = !up && (value < min || (bits != 64 && incr < min_incr) ||
                            (value < 0 && incr < 0 && incr < min_incr));
  if (!up && !down) return false;
  if (mode == Overflow::kWrap) {
    uint64_t sum = static_cast<uint64_t>(value) + static_cast<uint64_t>(incr);
    if (bits < 64) {
      const uint64_t high = ~uint64_t{0} << bits;
      sum = (sum & (uint64_t{1} << (bits - 1))) != 0 ? sum | high : sum & ~high;
    }
    *limit = static_cast<int64_t>(sum);
  } else if (mode == Overflow::kSat) {
    *limit = up ? max : min;
  }
  return true;
}

// SET and INCRBY on a field of type T (int64_t signed, uint64_t unsigned), read with `read` and
// checked with `overflows`: INCRBY replies the new value, SET the old one; a FAIL overflow
// writes nothing and replies nil.
template <typename T, typename Read, typename Overflows>
std::optional<int64_t> WriteField(std::string* s, const BitFieldOp& op, Read read,
                                  Overflows overflows) {
  const T old = read(*s, op.offset, op.bits);
  const bool incr = op.kind == BitFieldOp::Kind::kIncrBy;
  T limit = 0;
  const bool overflow = incr ? overflows(old, op.value, op.bits, op.overflow, &limit)
                             : overflows(static_cast<T>(op.value), 0, op.bits, op.overflow, &limit);
  if (overflow && op.overflow == Overflow::kFail) return std::nullopt;
  // The sum wraps as unsigned arithmetic (defined), as Redis's does.
  const T sum = static_cast<T>(static_cast<uint64_t>(old) + static_cast<uint64_t>(op.value));
  const T next = overflow ? limit : (incr ? sum : static_cast<T>(op.value));
  WriteBits(s, op.offset, op.bits, static_cast<uint64_t>(next));
  return static_cast<int64_t>(incr ? next : old);
}

}  // namespace

bool GetBit(std::string_view s, uint64_t offset) {
  return (ByteAt(s, offset / 8) & (0x80 >> (offset % 8))) != 0;
}

void SetBit(std::string* s, uint64_t offset, bool value) {
  char& byte = (*s)[offset / 8];
  const auto mask = static_cast<char>(0x80 >> (offset % 8));
  byte = static_cast<char>(value ? (byte | mask) : (byte & ~mask));
}

std::optional<BitSpan> SelectBits(const BitRange& range, uint64_t len) {
  const int64_t total = static_cast<int64_t>(len) * (range.in_bits ? 8 : 1);
  int64_t start = range.start;
  int64_t end = range.end_given ? range.end : total - 1;
  if (start < 0) start = total + start;
  if (end < 0) end = total + end;
  start = std::max<int64_t>(start, 0);
  end = std::max<int64_t>(end, 0);
  end = std::min(end, total - 1);
  if (start > end) return std::nullopt;
  if (range.in_bits) return BitSpan{static_cast<uint64_t>(start), static_cast<uint64_t>(end)};
  return BitSpan{static_cast<uint64_t>(start) * 8, static_cast<uint64_t>(end) * 8 + 7};
}

int64_t CountBits(std::string_view s, BitSpan span) {
  const uint64_t first_byte = span.first / 8;
  const uint64_t last_byte = span.last / 8;
  int64_t count = 0;
  uint64_t i = first_byte;
  auto partial = [&](uint64_t at) {
    count += std::popcount<uint8_t>(ByteAt(s, at) & MaskInSpan(at, span));
  };
  partial(i++);
  for (; i + 8 <= last_byte; i += 8) {
    uint64_t word;
    std::memcpy(&word, s.data() + i, 8);
    count += std::popcount(word);
  }
  for (; i <= last_byte; ++i) partial(i);
  return count;
}

int64_t FindBit(std::string_view s, bool bit, const std::optional<BitRange>& range) {
  const BitRange whole{};
  std::optional<BitSpan> span = SelectBits(range ? *range : whole, s.size());
  if (!span) return -1;
  for (uint64_t i = span->first / 8; i <= span->last / 8; ++i) {
    const uint8_t mask = MaskInSpan(i, *span);
    uint8_t byte = ByteAt(s, i);
    if (!bit) byte = static_cast<uint8_t>(~byte);  // look for a set bit either way
    byte &= mask;
    if (byte == 0) continue;
    return static_cast<int64_t>(i * 8 + std::countl_zero(byte));
  }
  const bool end_given = range && range->end_given;
  if (bit || end_given) return -1;
  return static_cast<int64_t>(span->last + 1);
}

std::string Combine(BitOpKind op, std::span<const std::string_view> inputs) {
  size_t longest = 0;
  for (std::string_view in : inputs) longest = std::max(longest, in.size());
  std::string out(longest, '\0');
  for (size_t j = 0; j < longest; ++j) {
    uint8_t acc = ByteAt(inputs[0], j);
    if (op == BitOpKind::kNot) acc = static_cast<uint8_t>(~acc);
    for (size_t i = 1; i < inputs.size(); ++i) {
      const uint8_t b = ByteAt(inputs[i], j);
      if (op == BitOpKind::kAnd) acc &= b;
      if (op == BitOpKind::kOr) acc |= b;
      if (op == BitOpKind::kXor) acc ^= b;
    }
    out[j] = static_cast<char>(acc);
  }
  return out;
}

std::optional<int64_t> ApplyBitField(std::string* s, const BitFieldOp& op) {
  if (op.kind == BitFieldOp::Kind::kGet) {
    return op.is_signed ? ReadSigned(*s, op.offset, op.bits)
                        : static_cast<int64_t>(ReadUnsigned(*s, op.offset, op.bits));
  }
  if (op.is_signed) return WriteField<int64_t>(s, op, ReadSigned, SignedOverflows);
  return WriteField<uint64_t>(s, op, ReadUnsigned, UnsignedOverflows);
}

uint64_t BitFieldGrowth(std::span<const BitFieldOp> ops) {
  uint64_t bytes = 0;
  for (const BitFieldOp& op : ops) {
    if (op.kind == BitFieldOp::Kind::kGet) continue;
    bytes = std::max(bytes, (op.offset + op.bits - 1) / 8 + 1);
  }
  return bytes;
}

}  // namespace sluice::bits
