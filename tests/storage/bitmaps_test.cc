// The pure bit operations (storage/types/bitmaps.h and lcs.h) with Redis 7.0's semantics; the
// expected values are Redis's replies for the same strings.
#include "bitmaps.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "lcs.h"

namespace sluice::testing {
namespace {

using BitRange = Store::Transaction::BitRange;
using BitFieldOp = Store::Transaction::BitFieldOp;
using Kind = BitFieldOp::Kind;
using Overflow = BitFieldOp::Overflow;

BitRange Bytes(int64_t start, int64_t end) { return {start, end, false, true}; }
BitRange BitsOf(int64_t start, int64_t end) { return {start, end, true, true}; }

int64_t Count(std::string_view s, const BitRange& r) {
  auto span = bits::SelectBits(r, s.size());
  return span ? bits::CountBits(s, *span) : 0;
}

std::optional<int64_t> Field(std::string* s, Kind kind, bool is_signed, int width, uint64_t offset,
                             int64_t value, Overflow overflow) {
  BitFieldOp op;
  op.kind = kind;
  op.is_signed = is_signed;
  op.bits = width;
  op.offset = offset;
  op.value = value;
  op.overflow = overflow;
  const uint64_t need = bits::BitFieldGrowth(std::span<const BitFieldOp>(&op, 1));
  if (s->size() < need) s->resize(need, '\0');
  return bits::ApplyBitField(s, op);
}

}  // namespace

TEST_CASE("bits: GETBIT/SETBIT address the most significant bit first") {
  std::string s(2, '\0');
  bits::SetBit(&s, 1, true);
  bits::SetBit(&s, 15, true);
  CHECK(s == std::string("\x40\x01", 2));
  CHECK(bits::GetBit(s, 1));
  CHECK_FALSE(bits::GetBit(s, 0));
  CHECK_FALSE(bits::GetBit(s, 1000));  // past the end: 0
}

TEST_CASE("bits: BITCOUNT ranges in bytes and bits, clamped as Redis clamps them") {
  const std::string s = "foobar";
  CHECK(Count(s, Bytes(0, -1)) == 26);
  CHECK(Count(s, Bytes(0, 0)) == 4);
  CHECK(Count(s, Bytes(1, 1)) == 6);
  CHECK(Count(s, BitsOf(5, 30)) == 17);
  CHECK(Count(s, Bytes(-2, -1)) == 7);
  CHECK(Count(s, Bytes(10, 20)) == 0);
  CHECK(Count(s, Bytes(-100, 100)) == 26);
  CHECK(Count("", Bytes(0, -1)) == 0);
}

TEST_CASE("bits: BITPOS finds set and clear bits, with Redis's end rules") {
  const std::string s("\xff\xf0\x00", 3);
  CHECK(bits::FindBit(s, false, std::nullopt) == 12);
  CHECK(bits::FindBit(s, true, std::nullopt) == 0);
  CHECK(bits::FindBit(std::string("\xff\xff", 2), false, std::nullopt) == 16);  // past the end
  BitRange no_end{0, -1, false, false};
  CHECK(bits::FindBit(std::string("\xff\xff", 2), false, no_end) == 16);
  CHECK(bits::FindBit(std::string("\xff\xff", 2), false, Bytes(0, -1)) == -1);  // end given
  CHECK(bits::FindBit(std::string("\x00\x00", 2), true, std::nullopt) == -1);
  CHECK(bits::FindBit(s, true, Bytes(2, -1)) == -1);
  CHECK(bits::FindBit(s, true, BitsOf(7, 15)) == 7);
  CHECK(bits::FindBit(s, false, BitsOf(7, 11)) == -1);
  CHECK(bits::FindBit(s, false, BitsOf(7, 12)) == 12);
  CHECK(bits::FindBit("", false, std::nullopt) == -1);
}

TEST_CASE("bits: BITOP pads shorter inputs with zeros") {
  const std::vector<std::string_view> in = {"foobar", "abc"};
  CHECK(bits::Combine(Store::Transaction::BitOpKind::kAnd, in) == std::string("`bc\0\0\0", 6));
  CHECK(bits::Combine(Store::Transaction::BitOpKind::kOr, in) == "goobar");
  CHECK(bits::Combine(Store::Transaction::BitOpKind::kXor, in) == std::string("\x07\x0d\x0c"
                                                                              "bar",
                                                                              6));
  const std::vector<std::string_view> one = {std::string_view("\x0f\xf0", 2)};
  CHECK(bits::Combine(Store::Transaction::BitOpKind::kNot, one) == std::string("\xf0\x0f", 2));
  const std::vector<std::string_view> empty = {"", ""};
  CHECK(bits::Combine(Store::Transaction::BitOpKind::kOr, empty).empty());
}

TEST_CASE("bits: BITFIELD reads, writes and overflows as Redis") {
  std::string s;
  CHECK(Field(&s, Kind::kSet, false, 8, 0, 255, Overflow::kWrap) == 0);
  CHECK(s == "\xff");
  CHECK(Field(&s, Kind::kGet, true, 8, 0, 0, Overflow::kWrap) == -1);
  CHECK(Field(&s, Kind::kIncrBy, false, 8, 0, 10, Overflow::kWrap) == 9);
  CHECK(Field(&s, Kind::kIncrBy, false, 8, 0, 300, Overflow::kSat) == 255);
  CHECK(Field(&s, Kind::kIncrBy, false, 8, 0, 1, Overflow::kFail) == std::nullopt);
  CHECK(Field(&s, Kind::kIncrBy, false, 8, 0, -300, Overflow::kSat) == 0);
  CHECK(Field(&s, Kind::kIncrBy, true, 4, 0, 7, Overflow::kWrap) == 7);
  CHECK(Field(&s, Kind::kIncrBy, true, 4, 0, 1, Overflow::kWrap) == -8);
  CHECK(Field(&s, Kind::kIncrBy, true, 4, 0, -100, Overflow::kSat) == -8);
  CHECK(Field(&s, Kind::kSet, true, 4, 0, 100, Overflow::kSat) == -8);
  CHECK(Field(&s, Kind::kGet, true, 4, 0, 0, Overflow::kWrap) == 7);
  CHECK(Field(&s, Kind::kSet, false, 8, 0, -1, Overflow::kFail) == std::nullopt);
  CHECK(Field(&s, Kind::kSet, true, 64, 8, INT64_MIN, Overflow::kWrap) == 0);
  CHECK(Field(&s, Kind::kIncrBy, true, 64, 8, -1, Overflow::kWrap) == INT64_MAX);
  CHECK(Field(&s, Kind::kIncrBy, true, 64, 8, 1, Overflow::kFail) == std::nullopt);
  CHECK(Field(&s, Kind::kGet, false, 63, 8, 0, Overflow::kWrap) == INT64_MAX >> 1);
  CHECK(s.size() == 9);
}

TEST_CASE("lcs: the subsequence and IDX ranges are Redis's") {
  auto r = lcs::Compute("ohmytext", "mynewtext", 0);
  CHECK(r.lcs == "mytext");
  REQUIRE(r.matches.size() == 2);
  CHECK(r.matches[0].a_start == 4);
  CHECK(r.matches[0].a_end == 7);
  CHECK(r.matches[0].b_start == 5);
  CHECK(r.matches[0].b_end == 8);
  CHECK(r.matches[1].a_start == 2);
  CHECK(r.matches[1].a_end == 3);
  CHECK(r.matches[1].b_start == 0);
  CHECK(r.matches[1].b_end == 1);
  CHECK(lcs::Compute("ohmytext", "mynewtext", 4).matches.size() == 1);
  CHECK(lcs::Compute("", "abc", 0).lcs.empty());
  CHECK(lcs::TableBytes("ab", "abc") == 3 * 4 * 4);
}

}  // namespace sluice::testing
