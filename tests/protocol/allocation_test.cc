// Steady-state allocation checks: parsing pipelined commands and writing replies into a
// reserved buffer must not touch the heap. This file replaces the global operator new for the
// whole test binary with a counting version (malloc underneath).
#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>

#include "protocol/reply_writer.h"
#include "protocol/request_parser.h"

namespace {
std::atomic<long> g_allocations{0};
}  // namespace

void* operator new(size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size ? size : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

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
  const long cold = g_allocations.load();
  REQUIRE(ParseAll(parser, pipeline) == 2000);  // warms the reused vectors and strings
  REQUIRE(g_allocations.load() > cold);         // the counter does see the parser's allocations
  const long before = g_allocations.load();
  const int commands = ParseAll(parser, pipeline);
  const long allocations = g_allocations.load() - before;
  CHECK(commands == 2000);
  CHECK(allocations == 0);
}

TEST_CASE("writing replies into a reserved buffer does not allocate") {
  std::string out;
  out.reserve(1 << 16);
  ReplyWriter writer(&out, 3);
  const long before = g_allocations.load();
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
  const long allocations = g_allocations.load() - before;
  CHECK(allocations == 0);
  CHECK(out.size() < out.capacity());
}

}  // namespace
}  // namespace sluice::protocol
