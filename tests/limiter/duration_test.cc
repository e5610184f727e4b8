// ParseDuration: the accepted grammar and every kind of rejection.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sluice/limiter.h"

namespace sluice::limiter {
namespace {

TEST_CASE("ParseDuration accepts a positive integer with an optional unit") {
  struct Row {
    std::string text;
    int64_t ns;
  };
  std::vector<Row> rows = {
      {"250ms", 250 * kNsPerMs},
      {"10", 10 * kNsPerSecond},
      {"10s", 10 * kNsPerSecond},
      {"1m", 60 * kNsPerSecond},
      {"24h", 24 * 3600 * kNsPerSecond},
      {"7d", 7 * 86400 * kNsPerSecond},
      {"1ms", kNsPerMs},
      {"1", kNsPerSecond},
      {"3650d", kMaxDurationNs},
      {"315360000", kMaxDurationNs},
      {"315360000000ms", kMaxDurationNs},
      {"87600h", kMaxDurationNs},
  };
  for (const Row& r : rows) {
    CAPTURE(r.text);
    int64_t ns = -7;
    CHECK(ParseDuration(r.text, "period", &ns) == "");
    CHECK(ns == r.ns);
  }
}

TEST_CASE("ParseDuration rejects with a message naming the argument") {
  const std::string kShape = "must be a positive integer with an optional unit (ms, s, m, h or d)";
  const std::string kUnit = "unknown unit (use ms, s, m, h or d)";
  const std::string kLong = "above the maximum of 10 years";
  const std::string kFrac = "fractions are not allowed (use a smaller unit, e.g. 1500ms)";
  struct Row {
    std::string text, why;
  };
  std::vector<Row> rows = {
      {"", kShape},
      {"0", "must be positive"},
      {"0ms", "must be positive"},
      {"000s", "must be positive"},
      {"-1", kShape},
      {"-5s", kShape},
      {"+5", kShape},
      {" 5", kShape},
      {"5 ", kUnit},
      {"5 s", kUnit},
      {"1.5s", kFrac},
      {"1.5", kFrac},
      {"1,5s", kFrac},
      {".5s", kShape},
      {"5x", kUnit},
      {"5S", kUnit},
      {"5MS", kUnit},
      {"5sec", kUnit},
      {"5msx", kUnit},
      {"5us", kUnit},
      {"5w", kUnit},
      {"s", kShape},
      {"ms", kShape},
      {"007s", kShape},
      {"3651d", kLong},
      {"315360001", kLong},
      {"315360000001ms", kLong},
      {"9223372036854775807", kLong},
      {"9223372036854775808", kLong},
      {"99999999999999999999999999d", kLong},
  };
  for (const Row& r : rows) {
    CAPTURE(r.text);
    int64_t ns = -7;
    CHECK(ParseDuration(r.text, "window", &ns) == "invalid window '" + r.text + "': " + r.why);
    CHECK(ns == -7);  // untouched on error
  }
  int64_t ns = 0;
  CHECK(ParseDuration("5x", "period", &ns) ==
        "invalid period '5x': unknown unit (use ms, s, m, h or d)");
  CHECK(ParseDuration(std::string("5\0s", 3), "lease", &ns) ==
        "invalid lease '" + std::string("5\0s", 3) + "': " + kUnit);
  // A huge argument is echoed cut short.
  std::string long_text(100, 'x');
  CHECK(ParseDuration(long_text, "period", &ns) ==
        "invalid period '" + std::string(64, 'x') + "...': " + kShape);
}

}  // namespace
}  // namespace sluice::limiter
