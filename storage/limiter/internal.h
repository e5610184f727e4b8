// Internal helpers shared by the limiter algorithms: checked 128-bit arithmetic, decimal text
// and varint codecs. Not part of the public interface; everything here is pure.
#pragma once

#include <charconv>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "sluice/limiter.h"

namespace sluice::limiter::internal {

using i128 = __int128;

inline constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();

// Clamps a 128-bit value into [0, INT64_MAX]: times and counts we report are never negative and
// saturate rather than wrap.
inline int64_t ClampNonNeg(i128 v) {
  if (v < 0) return 0;
  if (v > kI64Max) return kI64Max;
  return static_cast<int64_t>(v);
}

// ceil(a / b) for a >= 0, b > 0.
inline i128 CeilDiv(i128 a, i128 b) { return a / b + (a % b != 0 ? 1 : 0); }

// Absolute expiry in ms (rounded up) of the instant `at_ns`, saturating at INT64_MAX.
inline int64_t ExpireAtMs(i128 at_ns) {
  return ClampNonNeg(CeilDiv(at_ns < 0 ? 0 : at_ns, kNsPerMs));
}

// Parses a decimal int64 the way Redis's string2ll does: optional '-', digits, no leading zeros
// (except "0" itself), no '+', no spaces, no overflow. Returns false otherwise.
bool ParseDecimal(std::string_view s, int64_t* out);

// Appends `v` as a LEB128 varint (7 bits per byte, low group first).
void PutVarint(std::string* dst, uint64_t v);
// Reads a varint from the front of *src and advances it. False on truncation, on more than 10
// bytes, or on a value that does not fit in 64 bits.
bool GetVarint(std::string_view* src, uint64_t* v);
// Like GetVarint, but the value must also be at most INT64_MAX.
bool GetVarintI64(std::string_view* src, int64_t* v);

// Fixed-width little-endian unsigned 64-bit integers.
inline void PutFixed64(std::string* dst, uint64_t v) {
  for (int i = 0; i < 8; ++i) dst->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
inline bool GetFixed64(std::string_view* src, uint64_t* v) {
  if (src->size() < 8) return false;
  uint64_t r = 0;
  for (int i = 0; i < 8; ++i) r |= uint64_t{static_cast<unsigned char>((*src)[i])} << (8 * i);
  src->remove_prefix(8);
  *v = r;
  return true;
}

// A Decision with only `limit` set; the starting point of every take.
inline Outcome OutcomeWithLimit(int64_t limit) {
  Outcome o;
  o.decision.limit = limit;
  return o;
}

// Resets *o for a new take, keeping o->value's capacity (so the hot path does not allocate).
inline void ResetOutcome(Outcome* o, int64_t limit) {
  o->decision = Decision{};
  o->decision.limit = limit;
  o->write = Outcome::Write::kNone;
  o->value.clear();
  o->expire_at_ms = -1;
  o->corrupt = false;
}

// *s = decimal text of v, within s's existing capacity when it fits (no allocation once warm).
inline void AssignDecimal(std::string* s, int64_t v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  s->assign(buf, static_cast<size_t>(end - buf));
}

inline Outcome CorruptOutcome(int64_t limit) {
  Outcome o = OutcomeWithLimit(limit);
  o.corrupt = true;
  return o;
}

}  // namespace sluice::limiter::internal
