// The replication backlog: offsets, wrap-around, what a partial resync may read, resizing.
#include "server/replication/backlog.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

namespace sluice::server::replication {
namespace {

std::string From(const Backlog& b, int64_t from) {
  std::string out;
  b.CopyFrom(from, &out);
  return out;
}

TEST_CASE("Backlog: offsets and reads before wrapping") {
  Backlog b(16);
  CHECK(b.offset() == 0);
  CHECK(b.histlen() == 0);
  CHECK(b.Holds(1));
  CHECK(From(b, 1).empty());
  b.Append("hello");
  CHECK(b.offset() == 5);
  CHECK(b.first_offset() == 1);
  CHECK(From(b, 1) == "hello");
  CHECK(From(b, 3) == "llo");
  CHECK(b.Holds(6));
  CHECK(!b.Holds(7));
  CHECK(!b.Holds(0));
}

TEST_CASE("Backlog: wrap-around keeps the newest bytes") {
  Backlog b(8);
  std::string all;
  for (int i = 0; i < 20; ++i) {
    const std::string piece(1 + i % 3, static_cast<char>('a' + i));
    b.Append(piece);
    all += piece;
    CHECK(b.offset() == static_cast<int64_t>(all.size()));
    const int64_t held = std::min<int64_t>(8, static_cast<int64_t>(all.size()));
    CHECK(b.histlen() == held);
    CHECK(From(b, b.first_offset()) == all.substr(all.size() - static_cast<size_t>(held)));
    CHECK(From(b, b.offset()) == all.substr(all.size() - 1));
  }
  CHECK(!b.Holds(b.first_offset() - 1));
  b.Append(std::string(30, 'z'));  // bigger than the buffer
  CHECK(b.histlen() == 8);
  CHECK(From(b, b.first_offset()) == std::string(8, 'z'));
}

TEST_CASE("Backlog: reset and resize") {
  Backlog b(8);
  b.Append("abcdefghij");
  b.Reset(100);
  CHECK(b.offset() == 100);
  CHECK(b.histlen() == 0);
  CHECK(b.Holds(101));
  b.Append("xyz");
  CHECK(From(b, 101) == "xyz");
  b.Resize(2);
  CHECK(b.offset() == 103);
  CHECK(From(b, b.first_offset()) == "yz");
  b.Resize(64);
  b.Append("123");
  CHECK(From(b, 102) == "yz123");
}

}  // namespace
}  // namespace sluice::server::replication
