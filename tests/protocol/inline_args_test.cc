// SplitInlineArgs: Redis 7.0's sdssplitargs rules (outputs checked against redis-server 7.0.15
// with ECHO over a raw socket where noted).
#include "protocol/inline_args.h"

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

namespace sluice::protocol {
namespace {

using namespace std::string_literals;
using Words = std::vector<std::string>;

// The words of `line`, or nullopt for unbalanced quotes.
std::optional<Words> Split(std::string_view line) {
  std::string bytes = "prefix kept";
  std::vector<std::pair<size_t, size_t>> spans;
  if (!SplitInlineArgs(line, &bytes, &spans)) return std::nullopt;
  Words words;
  for (auto [offset, length] : spans) words.push_back(bytes.substr(offset, length));
  return words;
}

TEST_CASE("whitespace separates words; blank lines have none") {
  CHECK(Split("SET key value") == Words{"SET", "key", "value"});
  CHECK(Split("  SET\t\tkey   value  ") == Words{"SET", "key", "value"});
  CHECK(Split("") == Words{});
  CHECK(Split(" \t \r ") == Words{});
  CHECK(Split("a\rb\nc") == Words{"a", "b", "c"});
}

TEST_CASE("vertical tab and form feed: skipped between words, kept inside one") {
  CHECK(Split("\va\vb") == Words{"a\vb"});  // redis-server: ECHO \va\vb -> "a\vb"
  CHECK(Split("\f\fa b\f") == Words{"a", "b\f"});
}

TEST_CASE("double quotes and their escapes") {
  CHECK(Split("\"hello world\"") == Words{"hello world"});
  CHECK(Split("\"\"") == Words{""});
  CHECK(Split("\"a\\x41\\n\\q\\xZZ\"") == Words{"aA\nqxZZ"});  // as redis-server
  CHECK(Split("\"\\n\\r\\t\\b\\a\\\\\\\"\"") == Words{"\n\r\t\b\a\\\""});
  CHECK(Split("\"\\x4a\\x4A\\x00\\xff\"") == Words{"JJ\0\xff"s});
  CHECK(Split("\"\\x4\"") == Words{"x4"});
  CHECK(Split("\"a'b\"") == Words{"a'b"});
}

TEST_CASE("single quotes understand only \\'") {
  CHECK(Split("'a\\'b\\n'") == Words{"a'b\\n"});  // as redis-server
  CHECK(Split("''") == Words{""});
  CHECK(Split("'a\"b \\x41'") == Words{"a\"b \\x41"});
}

TEST_CASE("quotes may start inside a word") {
  CHECK(Split("a\"b c\"") == Words{"ab c"});  // as redis-server
  CHECK(Split("x'y z' w") == Words{"xy z", "w"});
}

TEST_CASE("a closing quote must be followed by whitespace or the end") {
  CHECK(Split("\"a\" b") == Words{"a", "b"});
  CHECK(Split("\"a\"\tb") == Words{"a", "b"});
  CHECK(Split("\"a\"\vb") == Words{"a", "b"});
  CHECK(Split("\"a\"b") == std::nullopt);
  CHECK(Split("'a'b") == std::nullopt);
  CHECK(Split("\"a\"\"b\"") == std::nullopt);
}

TEST_CASE("unterminated quotes") {
  CHECK(Split("\"abc") == std::nullopt);
  CHECK(Split("'abc") == std::nullopt);
  CHECK(Split("\"abc\\") == std::nullopt);
  CHECK(Split("\"abc\\\"") == std::nullopt);
  CHECK(Split("'abc\\'") == std::nullopt);
}

TEST_CASE("a NUL byte ends the line, as in a C string") {
  CHECK(Split("a b\0c d"s) == Words{"a", "b"});
  CHECK(Split("\"a\0\""s) == std::nullopt);
}

TEST_CASE("bytes are appended after existing content, spans point at them") {
  std::string bytes = "xyz";
  std::vector<std::pair<size_t, size_t>> spans;
  REQUIRE(SplitInlineArgs("ab 'c'", &bytes, &spans));
  CHECK(bytes == "xyzabc");
  CHECK(spans == std::vector<std::pair<size_t, size_t>>{{3, 2}, {5, 1}});
}

}  // namespace
}  // namespace sluice::protocol
