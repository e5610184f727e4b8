// Steady-state allocation checks: parsing pipelined commands and writing replies into a
// reserved buffer must not touch the heap. This file replaces the global operator new for the
// whole test binary with the counting version of tests/common/counting_new.h.
#include <doctest/doctest.h>

#include <cstdlib>
#include <new>
#include <string>

#include "protocol/reply_writer.h"
#include "protocol/request_parser.h"
#include "tests/common/counting_new.h"

namespace sluice::protocol {
namespace {

// Parses every command in `data`; returns how many there were.
int ParseAll(RequestParser& parser, std::string_view data) {
  int commands = 0;
  size_t consumed = 0;
  while (parser.Parse(data, &consumed) == ParseResult::kCommand) {
    data.remove_prefix(consumed);
    ++commands;
  }
  return commands;
}

TEST_CASE("parsing pipelined commands does not allocate once the parser is warm") {
  std::string pipeline;
  for (int i = 0; i < 1000; ++i) {
    pipeline += "*3\r\n$3\r\nSET\r\n$5\r\nkey:" + std::to_string(i % 10) + "\r\n$1\r\nv\r\n";
    pipeline += "PING \"quoted arg\" x\r\n";
  }
  RequestParser parser;
  testing::AllocationCounter cold;
  REQUIRE(ParseAll(parser, pipeline) == 2000);  // warms the reused vectors and strings
  REQUIRE(cold.Stop() > 0);                     // the counter does see the parser's allocations
  testing::AllocationCounter warm;
  const int commands = ParseAll(parser, pipeline);
  const long allocations = warm.Stop();
  CHECK(commands == 2000);
  CHECK(allocations == 0);
}

TEST_CASE("writing replies into a reserved buffer does not allocate") {
  std::string out;
  out.reserve(1 << 16);
  ReplyWriter writer(&out, 3);
  testing::AllocationCounter counter;
  for (int i = 0; i < 100; ++i) {
    writer.Array(3);
    writer.Integer(-1234567890123LL * i);
    writer.Bulk("value");
    writer.Double(0.1 * i);
    writer.Map(1);
    writer.Simple("OK");
    writer.Error("ERR no\r\nnewline");
    writer.Boolean(i % 2);
    writer.NullBulk();
    writer.Verbatim("txt", "info");
  }
  const long allocations = counter.Stop();
  CHECK(allocations == 0);
  CHECK(out.size() < out.capacity());
}

}  // namespace
}  // namespace sluice::protocol
