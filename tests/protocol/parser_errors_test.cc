// RequestParser protocol errors: Redis 7.0.15's exact texts (checked over a raw socket) and the
// limits, exactly at and one past each one.
#include <doctest/doctest.h>

#include <limits>
#include <string>

#include "protocol/request_parser.h"
#include "tests/protocol/parser_test_util.h"

namespace sluice::protocol {
namespace {

using testing::ErrorOf;
using testing::FeedByteByByte;
using testing::FeedWhole;
using namespace std::string_literals;

constexpr size_t kInlineMax = 64 * 1024;

bool NeedsMore(const std::string& data, ParserLimits limits = {}) {
  const testing::Outcome outcome = FeedWhole(data, limits);
  return outcome.last == ParseResult::kNeedMore && outcome.commands.empty();
}

TEST_CASE("invalid multibulk length") {
  const std::string text = "Protocol error: invalid multibulk length";
  for (const std::string& header :
       {"*abc\r\n"s, "*\r\n"s, "*-0\r\n"s, "*01\r\n"s, "*+1\r\n"s, "* 1\r\n"s, "*1 \r\n"s,
        "*2147483648\r\n"s, "*99999999999999999999\r\n"s}) {
    CAPTURE(header);
    CHECK(ErrorOf(header) == text);
    CHECK(FeedByteByByte(header).error == text);
  }
  CHECK(NeedsMore("*2147483647\r\n"));  // Redis 7.0 allows up to INT_MAX arguments
}

TEST_CASE("max_multibulk_len: at the limit and one past") {
  ParserLimits limits;
  limits.max_multibulk_len = 5;
  CHECK(NeedsMore("*5\r\n", limits));
  CHECK(ErrorOf("*6\r\n", limits) == "Protocol error: invalid multibulk length");
}

TEST_CASE("expected '$', got the byte found") {
  CHECK(ErrorOf("*1\r\nX4\r\nPING\r\n") == "Protocol error: expected '$', got 'X'");
  CHECK(ErrorOf("*2\r\n$1\r\na\r\n:1\r\n") == "Protocol error: expected '$', got ':'");
  CHECK(ErrorOf("*1\r\n\xff\r\n") == "Protocol error: expected '$', got '\xff'");
  // Redis replaces the CR with a space in the reply.
  CHECK(ErrorOf("*1\r\n\r\n") == "Protocol error: expected '$', got ' '");
  // No error until the line's CR and the byte after it have arrived.
  CHECK(NeedsMore("*1\r\nX4"));
  CHECK(NeedsMore("*1\r\nX4\r"));
}

TEST_CASE("invalid bulk length") {
  const std::string text = "Protocol error: invalid bulk length";
  for (const std::string& header :
       {"$-1\r\n"s, "$abc\r\n"s, "$\r\n"s, "$01\r\n"s, "$-0\r\n"s, "$+3\r\n"s, "$3 \r\n"s,
        "$536870913\r\n"s, "$9223372036854775808\r\n"s}) {
    CAPTURE(header);
    CHECK(ErrorOf("*1\r\n" + header) == text);
  }
  CHECK(NeedsMore("*1\r\n$536870912\r\n"));  // proto-max-bulk-len is 512MB
}

// Headers of up to 18 digits are read in one pass; longer ones, and any other shape, the general
// way. Both must give the same results at the boundary, whole and byte by byte.
TEST_CASE("long header counts: 18, 19 and 20 digits") {
  ParserLimits limits;
  limits.max_bulk_len = std::numeric_limits<int64_t>::max();
  const std::string d18(18, '9');                      // 999...9 (18 digits)
  const std::string d19 = "1" + std::string(18, '0');  // 10^18
  for (const std::string& len : {d18, d19, "9223372036854775807"s}) {
    CAPTURE(len);
    const std::string cmd = "*1\r\n$" + len + "\r\n";
    CHECK(NeedsMore(cmd, limits));
    CHECK(FeedByteByByte(cmd, limits).error.empty());
    CHECK(ErrorOf(cmd) == "Protocol error: invalid bulk length");  // over 512MB by default
  }
  for (const std::string& len : {"9223372036854775808"s, "0" + d18, "-" + d18, "1" + d19}) {
    CAPTURE(len);
    CHECK(ErrorOf("*1\r\n$" + len + "\r\n", limits) == "Protocol error: invalid bulk length");
    CHECK(FeedByteByByte("*1\r\n$" + len + "\r\n", limits).error ==
          "Protocol error: invalid bulk length");
  }
  for (const std::string& count : {d18, d19}) {
    CAPTURE(count);
    CHECK(ErrorOf("*" + count + "\r\n") == "Protocol error: invalid multibulk length");
  }
  // "0" alone is a count; the empty bulk parses.
  const testing::Outcome empty = FeedByteByByte("*2\r\n$0\r\n\r\n$1\r\nx\r\n");
  REQUIRE(empty.commands.size() == 1);
  CHECK(empty.commands[0] == testing::Command{"", "x"});
  CHECK(ErrorOf("*1\r\n$00\r\n\r\n") == "Protocol error: invalid bulk length");
}

TEST_CASE("max_bulk_len: at the limit and one past") {
  ParserLimits limits;
  limits.max_bulk_len = 10;
  CHECK(NeedsMore("*1\r\n$10\r\n", limits));
  CHECK(ErrorOf("*1\r\n$11\r\n", limits) == "Protocol error: invalid bulk length");
}

TEST_CASE("too big mbulk count string: more than 64KB without CR") {
  const std::string text = "Protocol error: too big mbulk count string";
  CHECK(NeedsMore("*" + std::string(kInlineMax - 1, '1')));
  CHECK(ErrorOf("*" + std::string(kInlineMax, '1')) == text);
  // Decided by the header's length, not by whether its CR came in the same read.
  CHECK(ErrorOf("*" + std::string(kInlineMax, '1') + "\r\n") == text);
  CHECK(ErrorOf("*" + std::string(kInlineMax - 1, '1') + "\r\n") ==
        "Protocol error: invalid multibulk length");
}

TEST_CASE("too big bulk count string: more than 64KB without CR") {
  const std::string text = "Protocol error: too big bulk count string";
  CHECK(NeedsMore("*1\r\n$" + std::string(kInlineMax - 1, '1')));
  CHECK(ErrorOf("*1\r\n$" + std::string(kInlineMax, '1')) == text);
  CHECK(ErrorOf("*1\r\n$" + std::string(kInlineMax, '1') + "\r\n") == text);
  CHECK(ErrorOf("*1\r\n$" + std::string(kInlineMax - 1, '1') + "\r\n") ==
        "Protocol error: invalid bulk length");
}

TEST_CASE("too big inline request: more than 64KB before LF") {
  const std::string text = "Protocol error: too big inline request";
  CHECK(NeedsMore(std::string(kInlineMax, 'a')));
  CHECK(ErrorOf(std::string(kInlineMax + 1, 'a')) == text);
  CHECK(ErrorOf(std::string(kInlineMax, 'a') + "\r") == text);
  CHECK(ErrorOf(std::string(kInlineMax, 'a') + "\r\n") == text);
  const testing::Outcome at_limit = FeedWhole(std::string(kInlineMax, 'a') + "\n");
  REQUIRE(at_limit.commands.size() == 1);
  CHECK(at_limit.commands[0][0].size() == kInlineMax);
}

TEST_CASE("a NUL-hidden terminator ends in the too big errors past 64KB") {
  const std::string padding(kInlineMax, 'p');
  CHECK(NeedsMore("PI\0NG\r\n"s + std::string(kInlineMax - 7, 'p')));
  CHECK(ErrorOf("PI\0NG\r\n"s + std::string(kInlineMax - 6, 'p')) ==
        "Protocol error: too big inline request");
  CHECK(ErrorOf("*1\0\r\n"s + padding) == "Protocol error: too big mbulk count string");
  CHECK(ErrorOf("*1\r\n$1\0\r\n"s + padding) == "Protocol error: too big bulk count string");
}

TEST_CASE("max_inline_len is configurable") {
  ParserLimits limits;
  limits.max_inline_len = 8;
  CHECK(FeedWhole("12345678\n", limits).commands.size() == 1);
  CHECK(ErrorOf("123456789\n", limits) == "Protocol error: too big inline request");
  CHECK(NeedsMore("*" + std::string(7, '1'), limits));
  CHECK(ErrorOf("*" + std::string(8, '1'), limits) == "Protocol error: too big mbulk count string");
  // Complete headers are held to it too (the header line's length before its CR).
  limits.max_inline_len = 4;
  CHECK(NeedsMore("*1\r\n$123\r\n", limits));
  CHECK(ErrorOf("*1\r\n$1234\r\n", limits) == "Protocol error: too big bulk count string");
  CHECK(ErrorOf("*1234\r\n", limits) == "Protocol error: too big mbulk count string");
}

TEST_CASE("unbalanced quotes in request") {
  const std::string text = "Protocol error: unbalanced quotes in request";
  CHECK(ErrorOf("ECHO \"abc\r\n") == text);
  CHECK(ErrorOf("ECHO \"a\"b\r\n") == text);
  CHECK(ErrorOf("ECHO 'a'b\r\n") == text);
  CHECK(ErrorOf("ECHO \"a\\\r\n") == text);
}

TEST_CASE("unauthenticated limits: at the limit and one past") {
  const ParserLimits limits = UnauthenticatedLimits({});
  CHECK(limits.unauthenticated);
  CHECK(limits.max_bulk_len == ParserLimits{}.max_bulk_len);
  CHECK(NeedsMore("*10\r\n", limits));
  CHECK(ErrorOf("*11\r\n", limits) == "Protocol error: unauthenticated multibulk length");
  CHECK(NeedsMore("*1\r\n$16384\r\n", limits));
  CHECK(ErrorOf("*1\r\n$16385\r\n", limits) == "Protocol error: unauthenticated bulk length");
  // The ordinary limits are checked first, as in Redis.
  CHECK(ErrorOf("*2147483648\r\n", limits) == "Protocol error: invalid multibulk length");
  CHECK(ErrorOf("*1\r\n$536870913\r\n", limits) == "Protocol error: invalid bulk length");
  // Counts <= 0 and inline commands are not affected.
  CHECK(FeedWhole("*-5\r\nPING\r\n", limits).commands.size() == 2);
}

TEST_CASE("set_limits switches between authenticated and unauthenticated limits") {
  RequestParser parser(UnauthenticatedLimits({}));
  size_t consumed = 0;
  const std::string header = "*11\r\n";
  CHECK(parser.Parse(header, &consumed) == ParseResult::kError);
  parser.set_limits({});
  CHECK(parser.Parse(header, &consumed) == ParseResult::kNeedMore);
}

TEST_CASE("after an error the parser starts fresh and consumed stays 0") {
  RequestParser parser;
  size_t consumed = 7;
  REQUIRE(parser.Parse("*1\r\n$x\r\n", &consumed) == ParseResult::kError);
  CHECK(consumed == 0);
  CHECK(parser.args().empty());
  REQUIRE(parser.Parse("PING\r\n", &consumed) == ParseResult::kCommand);
  CHECK(consumed == 6);
}

TEST_CASE("commands before an error in the same buffer are still returned") {
  const testing::Outcome outcome = FeedWhole("PING\r\n*1\r\n$4\r\nECHO\r\n*x\r\nPING\r\n");
  CHECK(outcome.commands == std::vector<testing::Command>{{"PING"}, {"ECHO"}});
  CHECK(outcome.last == ParseResult::kError);
  CHECK(outcome.error == "Protocol error: invalid multibulk length");
}

}  // namespace
}  // namespace sluice::protocol
