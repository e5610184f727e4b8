// The internal codecs every binary state format relies on: varints and Redis-style decimals.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "storage/limiter/internal.h"

namespace sluice::limiter::internal {
namespace {

TEST_CASE("varints round-trip and reject malformed input") {
  struct Row {
    uint64_t v;
    size_t bytes;
  };
  std::vector<Row> rows = {{0, 1},
                           {1, 1},
                           {127, 1},
                           {128, 2},
                           {16383, 2},
                           {16384, 3},
                           {uint64_t{1} << 62, 9},
                           {uint64_t(INT64_MAX), 9},
                           {uint64_t{1} << 63, 10},
                           {UINT64_MAX, 10}};
  for (const Row& r : rows) {
    CAPTURE(r.v);
    std::string buf;
    PutVarint(&buf, r.v);
    CHECK(buf.size() == r.bytes);
    buf += "tail";
    std::string_view in = buf;
    uint64_t got = 0;
    REQUIRE(GetVarint(&in, &got));
    CHECK(got == r.v);
    CHECK(in == "tail");
    std::string_view in2 = buf;
    int64_t signed_got = 0;
    CHECK(GetVarintI64(&in2, &signed_got) == (r.v <= uint64_t(INT64_MAX)));
    // Every strict prefix is truncated.
    for (size_t n = 0; n < r.bytes; ++n) {
      std::string_view cut = std::string_view(buf).substr(0, n);
      CHECK_FALSE(GetVarint(&cut, &got));
    }
  }
  std::string too_long(10, static_cast<char>(0x80));
  too_long += '\x01';
  std::string_view in = too_long;
  uint64_t v = 0;
  CHECK_FALSE(GetVarint(&in, &v));
  std::string overflow(9, static_cast<char>(0xff));
  overflow += '\x02';  // bit 64
  in = overflow;
  CHECK_FALSE(GetVarint(&in, &v));
}

TEST_CASE("ParseDecimal follows Redis's string2ll") {
  struct Row {
    std::string text;
    bool ok;
    int64_t v;
  };
  std::vector<Row> rows = {
      {"0", true, 0},
      {"7", true, 7},
      {"-7", true, -7},
      {"9223372036854775807", true, INT64_MAX},
      {"-9223372036854775808", true, INT64_MIN},
      {"9223372036854775808", false, 0},
      {"-9223372036854775809", false, 0},
      {"", false, 0},
      {"-", false, 0},
      {"-0", false, 0},
      {"00", false, 0},
      {"01", false, 0},
      {"+1", false, 0},
      {" 1", false, 0},
      {"1 ", false, 0},
      {"1a", false, 0},
      {"1.0", false, 0},
      {"123456789012345678901", false, 0},
  };
  for (const Row& r : rows) {
    CAPTURE(r.text);
    int64_t v = 42;
    CHECK(ParseDecimal(r.text, &v) == r.ok);
    if (r.ok) CHECK(v == r.v);
  }
}

TEST_CASE("ClampNonNeg, CeilDiv and ExpireAtMs saturate instead of wrapping") {
  CHECK(ClampNonNeg(-5) == 0);
  CHECK(ClampNonNeg(static_cast<i128>(INT64_MAX) + 1) == INT64_MAX);
  CHECK(CeilDiv(0, 3) == 0);
  CHECK(CeilDiv(7, 7) == 1);
  CHECK(CeilDiv(8, 7) == 2);
  CHECK(ExpireAtMs(1) == 1);
  CHECK(ExpireAtMs(kNsPerMs) == 1);
  CHECK(ExpireAtMs(-3) == 0);
  CHECK(ExpireAtMs(static_cast<i128>(INT64_MAX) * kNsPerMs * 4) == INT64_MAX);
}

}  // namespace
}  // namespace sluice::limiter::internal
