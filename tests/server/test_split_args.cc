// SplitArgs: Redis's sdssplitargs, as redis.conf lines and a library's "#!lua" line use it.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "server/core/args.h"

namespace sluice::server::testing {

namespace {

// The words of `line`, or {"<false>"} when SplitArgs refuses it.
std::vector<std::string> Split(std::string_view line) {
  std::vector<std::string> words;
  if (!SplitArgs(line, &words)) return {"<false>"};
  return words;
}

}  // namespace

TEST_CASE("SplitArgs splits as Redis's sdssplitargs") {
  using W = std::vector<std::string>;
  CHECK(Split("") == W{});
  CHECK(Split("  a  b\tc ") == W{"a", "b", "c"});
  CHECK(Split("#!lua name=\"foo\"") == W{"#!lua", "name=foo"});  // a quote opens mid-word
  CHECK(Split("a \"b c\" 'd\\'e'") == W{"a", "b c", "d'e"});
  CHECK(Split("\"\\x41\\n\\t\\\\\\\"\"") == W{"A\n\t\\\""});
  CHECK(Split("'a\\b'") == W{"a\\b"});  // single quotes: only \' is an escape
  CHECK(Split("\"\" x") == W{"", "x"});
  CHECK(Split("\"x\"y") == W{"<false>"});  // text right after a closing quote
  CHECK(Split("\"open") == W{"<false>"});
  CHECK(Split("name='open") == W{"<false>"});
}

}  // namespace sluice::server::testing
