// Bit operations over a string's bytes, with Redis 7.0's semantics (SETBIT, GETBIT, BITCOUNT,
// BITPOS, BITOP, BITFIELD). Pure functions: no storage. Bit 0 is the most significant bit of
// byte 0. Internal header (storage/types); the Store operations are in bitmap_ops.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "sluice/transaction.h"

namespace sluice::bits {

using BitRange = Store::Transaction::BitRange;
using BitFieldOp = Store::Transaction::BitFieldOp;
using BitOpKind = Store::Transaction::BitOpKind;

bool GetBit(std::string_view s, uint64_t offset);          // false past the end
void SetBit(std::string* s, uint64_t offset, bool value);  // s must be long enough

// The inclusive range of bits a BITCOUNT/BITPOS range selects in a string of `len` bytes, after
// Redis's clamping (negative indices from the end; a byte range covers whole bytes); nullopt
// when it selects nothing.
struct BitSpan {
  uint64_t first = 0;
  uint64_t last = 0;
};
std::optional<BitSpan> SelectBits(const BitRange& range, uint64_t len);

// The number of set bits in [span.first, span.last].
int64_t CountBits(std::string_view s, BitSpan span);

// BITPOS: the first bit equal to `bit` in the selected range; -1 when there is none, except that
// looking for a 0 without an explicit end treats the string as followed by zeros.
int64_t FindBit(std::string_view s, bool bit, const std::optional<BitRange>& range);

// BITOP: the result over `inputs` (a missing key is an empty string), as long as the longest
// input (shorter ones are padded with zero bytes). NOT takes exactly one input.
std::string Combine(BitOpKind op, std::span<const std::string_view> inputs);

// BITFIELD on a string long enough for every write (BitFieldGrowth): runs `op`, returning its
// reply (nullopt: FAIL overflow, nothing written). Reads past the end of s read zeros.
std::optional<int64_t> ApplyBitField(std::string* s, const BitFieldOp& op);
// The string length the writes of ops need (0 when there are none).
uint64_t BitFieldGrowth(std::span<const BitFieldOp> ops);

}  // namespace sluice::bits
