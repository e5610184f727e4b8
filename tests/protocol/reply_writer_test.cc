// ReplyWriter: exact bytes of every method in RESP2 and RESP3 (Redis 7.0.15's forms).
#include "protocol/reply_writer.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <string>

namespace sluice::protocol {
namespace {

using namespace std::string_literals;

std::string Write(int resp, const std::function<void(ReplyWriter&)>& write) {
  std::string out;
  ReplyWriter writer(&out, resp);
  write(writer);
  return out;
}

// Same bytes in both protocol versions.
void CheckBoth(const std::function<void(ReplyWriter&)>& write, const std::string& expected) {
  CHECK(Write(2, write) == expected);
  CHECK(Write(3, write) == expected);
}

TEST_CASE("simple strings and errors are one line") {
  CheckBoth([](ReplyWriter& w) { w.Simple("OK"); }, "+OK\r\n");
  CheckBoth([](ReplyWriter& w) { w.Simple(""); }, "+\r\n");
  CheckBoth([](ReplyWriter& w) { w.Simple("a\r\nb"); }, "+a  b\r\n");
  CheckBoth([](ReplyWriter& w) { w.Error("ERR syntax error"); }, "-ERR syntax error\r\n");
  CheckBoth([](ReplyWriter& w) { w.Error("ERR bad\r\nthing\n"); }, "-ERR bad  thing \r\n");
}

TEST_CASE("integers across the int64 range") {
  CheckBoth([](ReplyWriter& w) { w.Integer(0); }, ":0\r\n");
  CheckBoth([](ReplyWriter& w) { w.Integer(42); }, ":42\r\n");
  CheckBoth([](ReplyWriter& w) { w.Integer(-1); }, ":-1\r\n");
  CheckBoth([](ReplyWriter& w) { w.Integer(std::numeric_limits<int64_t>::max()); },
            ":9223372036854775807\r\n");
  CheckBoth([](ReplyWriter& w) { w.Integer(std::numeric_limits<int64_t>::min()); },
            ":-9223372036854775808\r\n");
}

TEST_CASE("bulk strings are binary safe") {
  CheckBoth([](ReplyWriter& w) { w.Bulk("foo"); }, "$3\r\nfoo\r\n");
  CheckBoth([](ReplyWriter& w) { w.Bulk(""); }, "$0\r\n\r\n");
  CheckBoth([](ReplyWriter& w) { w.Bulk("a\0\r\nb"s); }, "$5\r\na\0\r\nb\r\n"s);
  const std::string big(100000, 'z');
  CheckBoth([&](ReplyWriter& w) { w.Bulk(big); }, "$100000\r\n" + big + "\r\n");
}

TEST_CASE("nulls: RESP2 $-1 and *-1, RESP3 _") {
  CHECK(Write(2, [](ReplyWriter& w) { w.NullBulk(); }) == "$-1\r\n");
  CHECK(Write(3, [](ReplyWriter& w) { w.NullBulk(); }) == "_\r\n");
  CHECK(Write(2, [](ReplyWriter& w) { w.NullArray(); }) == "*-1\r\n");
  CHECK(Write(3, [](ReplyWriter& w) { w.NullArray(); }) == "_\r\n");
}

TEST_CASE("aggregate headers") {
  CheckBoth([](ReplyWriter& w) { w.Array(0); }, "*0\r\n");
  CheckBoth([](ReplyWriter& w) { w.Array(3); }, "*3\r\n");
  CHECK(Write(2, [](ReplyWriter& w) { w.Map(0); }) == "*0\r\n");
  CHECK(Write(2, [](ReplyWriter& w) { w.Map(7); }) == "*14\r\n");
  CHECK(Write(3, [](ReplyWriter& w) { w.Map(7); }) == "%7\r\n");
  CHECK(Write(2, [](ReplyWriter& w) { w.Set(2); }) == "*2\r\n");
  CHECK(Write(3, [](ReplyWriter& w) { w.Set(2); }) == "~2\r\n");
  CHECK(Write(3, [](ReplyWriter& w) { w.Set(0); }) == "~0\r\n");
}

TEST_CASE("booleans: RESP2 integers, RESP3 #t/#f") {
  CHECK(Write(2, [](ReplyWriter& w) { w.Boolean(true); }) == ":1\r\n");
  CHECK(Write(2, [](ReplyWriter& w) { w.Boolean(false); }) == ":0\r\n");
  CHECK(Write(3, [](ReplyWriter& w) { w.Boolean(true); }) == "#t\r\n");
  CHECK(Write(3, [](ReplyWriter& w) { w.Boolean(false); }) == "#f\r\n");
}

TEST_CASE("doubles as Redis 7.0 prints them (ZSCORE in RESP2 and RESP3)") {
  struct Case {
    double value;
    std::string text;
  };
  const Case cases[] = {
      {0.1, "0.10000000000000001"},
      {1e300, "1.0000000000000001e+300"},
      {1.5, "1.5"},
      {3, "3"},
      {1e-7, "9.9999999999999995e-08"},
      {123456789012345678.0, "1.2345678901234568e+17"},
      {-0.0, "-0"},
      {-2.5, "-2.5"},
      {std::numeric_limits<double>::infinity(), "inf"},
      {-std::numeric_limits<double>::infinity(), "-inf"},
      {std::numeric_limits<double>::quiet_NaN(), "nan"},
      {-std::numeric_limits<double>::quiet_NaN(), "nan"},
      {std::numeric_limits<double>::denorm_min(), "4.9406564584124654e-324"},
      {-std::numeric_limits<double>::max(), "-1.7976931348623157e+308"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    CHECK(Write(3, [&](ReplyWriter& w) { w.Double(c.value); }) == "," + c.text + "\r\n");
    CHECK(Write(2, [&](ReplyWriter& w) { w.Double(c.value); }) ==
          "$" + std::to_string(c.text.size()) + "\r\n" + c.text + "\r\n");
  }
}

TEST_CASE("doubles match printf's %.17g bit pattern by bit pattern") {
  uint64_t bits = 0x0123456789ABCDEFull;
  for (int i = 0; i < 20000; ++i) {
    bits = bits * 6364136223846793005ull + 1442695040888963407ull;
    double v;
    std::memcpy(&v, &bits, sizeof v);
    if (std::isnan(v) || std::isinf(v)) continue;
    char expected[64];
    std::snprintf(expected, sizeof expected, ",%.17g\r\n", v);
    REQUIRE(Write(3, [&](ReplyWriter& w) { w.Double(v); }) == expected);
  }
}

TEST_CASE("verbatim strings: RESP3 =, RESP2 plain bulk") {
  CHECK(Write(3, [](ReplyWriter& w) { w.Verbatim("txt", "# Server\r\n"); }) ==
        "=14\r\ntxt:# Server\r\n\r\n");
  CHECK(Write(3, [](ReplyWriter& w) { w.Verbatim("mkd", ""); }) == "=4\r\nmkd:\r\n");
  CHECK(Write(2, [](ReplyWriter& w) { w.Verbatim("txt", "# Server\r\n"); }) ==
        "$10\r\n# Server\r\n\r\n");
}

TEST_CASE("raw bytes are appended unchanged") {
  CheckBoth([](ReplyWriter& w) { w.Raw("+PONG\r\n:1\r\n"); }, "+PONG\r\n:1\r\n");
}

TEST_CASE("replies append to the buffer and follow set_resp") {
  std::string out = "previous";
  ReplyWriter writer(&out);
  CHECK(writer.resp() == 2);
  CHECK(writer.buffer() == &out);
  writer.Map(1);
  writer.Bulk("k");
  writer.NullBulk();
  writer.set_resp(3);
  CHECK(writer.resp() == 3);
  writer.Map(1);
  writer.Bulk("k");
  writer.NullBulk();
  CHECK(out == "previous*2\r\n$1\r\nk\r\n$-1\r\n%1\r\n$1\r\nk\r\n_\r\n");
}

}  // namespace
}  // namespace sluice::protocol
