// RequestParser: multibulk framing, zero-copy, pipelining, splits across reads, and Redis 7.0's
// leniencies. Error texts and limits are in parser_errors_test.cc; inline quoting in
// inline_args_test.cc.
#include "protocol/request_parser.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/protocol/parser_test_util.h"

namespace sluice::protocol {
namespace {

using testing::Command;
using testing::FeedByteByByte;
using testing::FeedSplit;
using testing::FeedWhole;
using testing::Outcome;

using namespace std::string_literals;

std::string Multibulk(const std::vector<std::string>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const std::string& a : args) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return out;
}

// A stream mixing every framing: multibulk, binary bulks, empty commands, inline lines.
const std::string kMixedStream =
    Multibulk({"SET", "key", "value"}) + "*0\r\n" + "PING\r\n" + Multibulk({"ECHO", "a\0\r\nb"s}) +
    "*-1\r\n" + "ECHO \"x\\ty\" 'q'\n" + "\r\n" + Multibulk({"", "Z"}) + Multibulk({"GET", "key"});

const std::vector<Command> kMixedCommands = {
    {"SET", "key", "value"}, {}, {"PING"},  {"ECHO", "a\0\r\nb"s}, {},
    {"ECHO", "x\ty", "q"},   {}, {"", "Z"}, {"GET", "key"}};

TEST_CASE("a multibulk command is parsed with its exact length") {
  RequestParser parser;
  const std::string data = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhello\r\n*1\r\n";
  size_t consumed = 0;
  REQUIRE(parser.Parse(data, &consumed) == ParseResult::kCommand);
  CHECK(consumed == 31);
  CHECK(testing::CopyArgs(parser) == Command{"SET", "k", "hello"});
}

TEST_CASE("multibulk args are views into the caller's buffer") {
  RequestParser parser;
  const std::string data = "*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\n";
  size_t consumed = 0;
  REQUIRE(parser.Parse(data, &consumed) == ParseResult::kCommand);
  REQUIRE(parser.args().size() == 2);
  CHECK(parser.args()[0].data() == data.data() + 8);
  CHECK(parser.args()[1].data() == data.data() + 18);
}

TEST_CASE("a count <= 0 is consumed as a command with zero args") {
  for (const std::string& data : {"*0\r\n"s, "*-1\r\n"s, "*-5\r\n"s}) {
    RequestParser parser;
    size_t consumed = 0;
    REQUIRE(parser.Parse(data, &consumed) == ParseResult::kCommand);
    CHECK(consumed == data.size());
    CHECK(parser.args().empty());
  }
}

TEST_CASE("kNeedMore until the last byte of a command arrives") {
  const std::string data = Multibulk({"SET", "k", "v"});
  for (size_t n = 0; n < data.size(); ++n) {
    RequestParser parser;
    size_t consumed = 99;
    CHECK(parser.Parse(std::string_view(data).substr(0, n), &consumed) == ParseResult::kNeedMore);
    CHECK(consumed == 0);
  }
}

TEST_CASE("the mixed stream parses the same whole, byte by byte, and at every split") {
  const Outcome whole = FeedWhole(kMixedStream);
  REQUIRE(whole.commands == kMixedCommands);
  CHECK(whole.last == ParseResult::kNeedMore);
  CHECK(whole.leftover == 0);
  CHECK(FeedByteByByte(kMixedStream) == whole);
  for (size_t i = 0; i <= kMixedStream.size(); ++i) {
    CAPTURE(i);
    REQUIRE(FeedSplit(kMixedStream, {i}) == whole);
  }
}

TEST_CASE("every pair of split points gives the same commands") {
  const std::string stream = Multibulk({"SET", "k", "v"}) + "PING\r\n" + Multibulk({"GET", "k"});
  const Outcome whole = FeedWhole(stream);
  REQUIRE(whole.commands.size() == 3);
  for (size_t i = 0; i <= stream.size(); ++i) {
    for (size_t j = i; j <= stream.size(); ++j) {
      CAPTURE(i);
      CAPTURE(j);
      REQUIRE(FeedSplit(stream, {i, j}) == whole);
    }
  }
}

TEST_CASE("10,000 pipelined commands in one buffer") {
  std::string buffer;
  for (int i = 0; i < 10000; ++i) {
    buffer += i % 2 ? Multibulk({"INCR", "counter:" + std::to_string(i)}) : "PING\r\n";
  }
  RequestParser parser;
  std::string_view rest = buffer;
  int commands = 0;
  size_t consumed = 0;
  while (parser.Parse(rest, &consumed) == ParseResult::kCommand) {
    const Command expected =
        commands % 2 ? Command{"INCR", "counter:" + std::to_string(commands)} : Command{"PING"};
    REQUIRE(testing::CopyArgs(parser) == expected);
    rest.remove_prefix(consumed);
    ++commands;
  }
  CHECK(commands == 10000);
  CHECK(rest.empty());
}

TEST_CASE("bulk args are binary safe") {
  const std::string binary = "\0\r\n$3\r\n*1\r\n\xff\x80"s;
  const Outcome outcome = FeedByteByByte(Multibulk({"SET", binary, ""}));
  REQUIRE(outcome.commands.size() == 1);
  CHECK(outcome.commands[0] == Command{"SET", binary, ""});
}

TEST_CASE("a long command arriving in many pieces") {
  const std::string big(1 << 20, 'x');
  std::vector<std::string> args = {"MSET"};
  for (int i = 0; i < 2000; ++i) args.push_back("k" + std::to_string(i));
  args.push_back(big);
  const std::string data = Multibulk(args);
  std::vector<size_t> cuts;
  for (size_t cut = 777; cut < data.size(); cut += 777) cuts.push_back(cut);
  const Outcome outcome = FeedSplit(data, cuts);
  REQUIRE(outcome.commands.size() == 1);
  CHECK(outcome.commands[0] == args);
  CHECK(outcome.consumed[0] == data.size());
}

TEST_CASE("Redis does not check the bytes after '\\r' in headers or after a payload") {
  // Redis 7.0.15 answers +PONG twice for this stream.
  const Outcome outcome = FeedWhole("*1\rX$4\rXPINGxx*1\r\n$4\r\nPING\r\n");
  CHECK(outcome.commands == std::vector<Command>{{"PING"}, {"PING"}});
  CHECK(outcome.consumed == std::vector<size_t>{14, 14});
}

TEST_CASE("a header's '\\r' needs one more byte before the header is used") {
  RequestParser parser;
  size_t consumed = 0;
  CHECK(parser.Parse("*1\r", &consumed) == ParseResult::kNeedMore);
  CHECK(parser.Parse("*1\r\n$1\r", &consumed) == ParseResult::kNeedMore);
  CHECK(parser.Parse("*1\r\n$1\r\nA\r", &consumed) == ParseResult::kNeedMore);
  CHECK(parser.Parse("*1\r\n$1\r\nA\r\n", &consumed) == ParseResult::kCommand);
  CHECK(consumed == 11);
}

TEST_CASE("a NUL byte before a header's CR hides it, as strchr does in Redis") {
  // Redis 7.0.15 never answers these (until 64KB more arrive).
  CHECK(FeedWhole("*1\0\r\n$4\r\nPING\r\n"s).last == ParseResult::kNeedMore);
  CHECK(FeedWhole("*1\r\n$4\0\r\nPING\r\n"s).last == ParseResult::kNeedMore);
  CHECK(FeedWhole("PI\0NG\r\nPING\r\n"s).last == ParseResult::kNeedMore);
  CHECK(FeedWhole("PI\0NG\r\nPING\r\n"s).commands.empty());
  // A NUL inside a bulk payload is data.
  CHECK(FeedWhole("*1\r\n$4\r\nPI\0G\r\n"s).commands == std::vector<Command>{{"PI\0G"s}});
}

TEST_CASE("kCommand resets the parser for the next command") {
  RequestParser parser;
  size_t consumed = 0;
  REQUIRE(parser.Parse("*2\r\n$4\r\nECHO\r\n$1\r\na\r\n", &consumed) == ParseResult::kCommand);
  REQUIRE(parser.Parse("PING\r\n", &consumed) == ParseResult::kCommand);
  CHECK(testing::CopyArgs(parser) == Command{"PING"});
  CHECK(consumed == 6);
}

TEST_CASE("Reset() forgets a partial command") {
  RequestParser parser;
  size_t consumed = 0;
  REQUIRE(parser.Parse("*2\r\n$4\r\nECHO\r\n", &consumed) == ParseResult::kNeedMore);
  parser.Reset();
  REQUIRE(parser.Parse("*1\r\n$4\r\nPING\r\n", &consumed) == ParseResult::kCommand);
  CHECK(testing::CopyArgs(parser) == Command{"PING"});
}

TEST_CASE("shorter data after kNeedMore starts over instead of reading out of bounds") {
  RequestParser parser;
  size_t consumed = 0;
  REQUIRE(parser.Parse("*2\r\n$4\r\nECHO\r\n$3\r\nab", &consumed) == ParseResult::kNeedMore);
  REQUIRE(parser.Parse("PING\r\n", &consumed) == ParseResult::kCommand);
  CHECK(testing::CopyArgs(parser) == Command{"PING"});
}

TEST_CASE("inline args survive until the next Parse() even if the input buffer changes") {
  RequestParser parser;
  std::string data = "SET \"a b\" c\r\n";
  size_t consumed = 0;
  REQUIRE(parser.Parse(data, &consumed) == ParseResult::kCommand);
  data.assign(data.size(), '#');
  CHECK(testing::CopyArgs(parser) == Command{"SET", "a b", "c"});
}

TEST_CASE("inline line endings: LF alone, CRLF, and only one CR is stripped") {
  CHECK(FeedWhole("PING\n").commands == std::vector<Command>{{"PING"}});
  CHECK(FeedWhole("ECHO a\rb\n").commands == std::vector<Command>{{"ECHO", "a", "b"}});
  const Outcome outcome = FeedWhole("ECHO a\r\r\n\n");
  CHECK(outcome.commands == std::vector<Command>{{"ECHO", "a"}, {}});
  CHECK(outcome.consumed == std::vector<size_t>{9, 1});
}

TEST_CASE("garbage never crashes and never depends on how it was split") {
  uint64_t state = 0x9E3779B97F4A7C15ull;
  auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  const std::string alphabet = "*$\r\n0123456789-\"' \\xab\0"s;
  for (int round = 0; round < 300; ++round) {
    std::string data;
    const size_t len = next() % 200;
    for (size_t i = 0; i < len; ++i) {
      data.push_back(next() % 4 ? alphabet[next() % alphabet.size()]
                                : static_cast<char>(next() & 0xff));
    }
    const Outcome whole = FeedWhole(data);
    size_t total = whole.leftover;
    for (size_t c : whole.consumed) total += c;
    if (whole.last == ParseResult::kNeedMore) CHECK(total == data.size());
    if (whole.last == ParseResult::kError) CHECK(total < data.size());
    CHECK(FeedByteByByte(data) == whole);
  }
}

}  // namespace
}  // namespace sluice::protocol
