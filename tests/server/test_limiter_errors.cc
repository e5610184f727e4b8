// Argument errors of the limiter commands: exact text, and nothing written after an error.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/server/harness.h"

namespace sluice::server::testing {
namespace {

struct ErrorCase {
  std::string command;  // every case uses the key "k"
  std::string error;    // the full error line without "-" and CRLF
};

void CheckErrors(const std::vector<ErrorCase>& cases) {
  Harness h;
  for (const ErrorCase& c : cases) {
    CAPTURE(c.command);
    CHECK(h.Cmd(c.command) == Err(c.error));
    CHECK(h.Cmd("EXISTS k") == Int(0));
  }
  // None of them counted as a limiter call.
  CHECK(h.server().limiter_stats().InfoSection().find("_calls:1") == std::string::npos);
}

}  // namespace

TEST_CASE("durations: bad unit, zero, fraction, sign, overflow") {
  CheckErrors({
      {"GCRA.TAKE k 10 1x", "ERR invalid period '1x': unknown unit (use ms, s, m, h or d)"},
      {"GCRA.TAKE k 10 1S", "ERR invalid period '1S': unknown unit (use ms, s, m, h or d)"},
      {"GCRA.TAKE k 10 0", "ERR invalid period '0': must be positive"},
      {"GCRA.TAKE k 10 0ms", "ERR invalid period '0ms': must be positive"},
      {"GCRA.TAKE k 10 1.5s",
       "ERR invalid period '1.5s': fractions are not allowed (use a smaller unit, e.g. 1500ms)"},
      {"GCRA.TAKE k 10 -1s",
       "ERR invalid period '-1s': must be a positive integer with an optional unit (ms, s, m, h "
       "or d)"},
      {"GCRA.TAKE k 10 3651d", "ERR invalid period '3651d': above the maximum of 10 years"},
      {"LEAKY.TAKE k 10 1w", "ERR invalid period '1w': unknown unit (use ms, s, m, h or d)"},
      {"WINDOW.TAKE k 10 ms",
       "ERR invalid window 'ms': must be a positive integer with an optional unit (ms, s, m, h "
       "or d)"},
      {"SLIDING.TAKE k 10 0s", "ERR invalid window '0s': must be positive"},
      {"CONC.ACQUIRE k 10 5y", "ERR invalid lease '5y': unknown unit (use ms, s, m, h or d)"},
  });
}

TEST_CASE("counts: zero, negative, not an integer") {
  CheckErrors({
      {"GCRA.TAKE k 0 1s", "ERR invalid quota: must be a positive integer"},
      {"GCRA.TAKE k -5 1s", "ERR invalid quota: must be a positive integer"},
      {"GCRA.TAKE k ten 1s", "ERR invalid quota: must be a positive integer"},
      {"GCRA.TAKE k 010 1s", "ERR invalid quota: must be a positive integer"},
      {"LEAKY.TAKE k 0 1s", "ERR invalid rate: must be a positive integer"},
      {"WINDOW.TAKE k 0 1s", "ERR invalid limit: must be a positive integer"},
      {"SLIDING.TAKE k 0 1s", "ERR invalid limit: must be a positive integer"},
      {"CONC.ACQUIRE k 0 1s", "ERR invalid limit: must be a positive integer"},
      {"GCRA.TAKE k 10 1s BURST 0", "ERR invalid BURST: must be a positive integer"},
      {"LEAKY.TAKE k 10 1s BURST -1", "ERR invalid BURST: must be a non-negative integer"},
      {"LEAKY.TAKE k 10 1s DELAY x", "ERR invalid DELAY: must be a non-negative integer"},
  });
}

TEST_CASE("rates above 1 per nanosecond, and limits beyond the algorithm") {
  CheckErrors({
      {"GCRA.TAKE k 2000000000 1s",
       "ERR invalid period: rate above 1 per nanosecond (period / quota < 1ns)"},
      {"CL.THROTTLE k 1 2000000000 1",
       "ERR invalid count: rate above 1 per nanosecond (period / count < 1ns)"},
      {"SLIDING.TAKE k 10001 1s",
       "ERR invalid limit: at most 10000 for SLIDING.TAKE; use GCRA.TAKE for larger limits"},
  });
  Harness h;
  CHECK(h.Cmd("SLIDING.TAKE k 10000 1s") ==
        Arr({Int(1), Int(9999), Int(0), Int(1000), Int(10000)}));
}

TEST_CASE("COST: negative or not an integer") {
  CheckErrors({
      {"GCRA.TAKE k 10 1s COST -1", "ERR invalid COST: must be a non-negative integer"},
      {"LEAKY.TAKE k 10 1s COST -1", "ERR invalid COST: must be a non-negative integer"},
      {"WINDOW.TAKE k 10 1s COST -1", "ERR invalid COST: must be a non-negative integer"},
      {"SLIDING.TAKE k 10 1s COST 1.5", "ERR invalid COST: must be a non-negative integer"},
  });
}

TEST_CASE("options: unknown, duplicate, missing value, incompatible") {
  CheckErrors({
      {"GCRA.TAKE k 10 1s FOO 1", "ERR unknown option 'FOO'"},
      {"GCRA.TAKE k 10 1s DELAY 1", "ERR unknown option 'DELAY'"},
      {"WINDOW.TAKE k 10 1s BURST 2", "ERR unknown option 'BURST'"},
      {"SLIDING.TAKE k 10 1s NODELAY", "ERR unknown option 'NODELAY'"},
      {"CONC.ACQUIRE k 10 1s COST 1", "ERR unknown option 'COST'"},
      {"GCRA.TAKE k 10 1s COST 1 cost 2", "ERR duplicate option 'COST'"},
      {"GCRA.TAKE k 10 1s BURST 5 Burst 5", "ERR duplicate option 'BURST'"},
      {"LEAKY.TAKE k 10 1s NODELAY NODELAY", "ERR duplicate option 'NODELAY'"},
      {"CONC.ACQUIRE k 1 1s ID a ID b", "ERR duplicate option 'ID'"},
      {"GCRA.TAKE k 10 1s COST", "ERR missing value for option 'COST'"},
      {"GCRA.TAKE k 10 1s BURST", "ERR missing value for option 'BURST'"},
      {"LEAKY.TAKE k 10 1s DELAY", "ERR missing value for option 'DELAY'"},
      {"CONC.ACQUIRE k 1 1s ID", "ERR missing value for option 'ID'"},
      {"LEAKY.TAKE k 10 1s BURST 5 DELAY 2 NODELAY",
       "ERR invalid DELAY: not allowed together with NODELAY"},
      {"LEAKY.TAKE k 10 1s NODELAY delay 2",
       "ERR invalid DELAY: not allowed together with NODELAY"},
  });
  Harness h;
  CHECK(h.Run({"CONC.ACQUIRE", "k", "1", "1s", "ID", ""}) ==
        Err("ERR invalid ID: must not be empty"));
  CHECK(h.Cmd("EXISTS k") == Int(0));
}

TEST_CASE("wrong arity") {
  CheckErrors({
      {"GCRA.TAKE k 10", "ERR wrong number of arguments for 'gcra.take' command"},
      {"LEAKY.TAKE k", "ERR wrong number of arguments for 'leaky.take' command"},
      {"WINDOW.TAKE k 10", "ERR wrong number of arguments for 'window.take' command"},
      {"SLIDING.TAKE k 10", "ERR wrong number of arguments for 'sliding.take' command"},
      {"CONC.ACQUIRE k 10", "ERR wrong number of arguments for 'conc.acquire' command"},
      {"CONC.RELEASE k", "ERR wrong number of arguments for 'conc.release' command"},
      {"CONC.RELEASE k a b", "ERR wrong number of arguments for 'conc.release' command"},
      {"CL.THROTTLE k 1 1", "ERR wrong number of arguments for 'cl.throttle' command"},
      {"CL.THROTTLE k 1 1 1 1 1", "ERR wrong number of arguments for 'cl.throttle' command"},
  });
}

TEST_CASE("CL.THROTTLE invalid input (redis-cell's error cases, and negatives)") {
  CheckErrors({
      {"CL.THROTTLE k x 1 1", "ERR invalid max_burst: must be a non-negative integer"},
      {"CL.THROTTLE k -1 1 1", "ERR invalid max_burst: must be a non-negative integer"},
      {"CL.THROTTLE k 10 0 1", "ERR invalid count: must be a positive integer"},
      {"CL.THROTTLE k 10 -1 1", "ERR invalid count: must be a positive integer"},
      {"CL.THROTTLE k 10 1 0", "ERR invalid period: must be a positive integer"},
      {"CL.THROTTLE k 10 1 1s", "ERR invalid period: must be a positive integer"},
      {"CL.THROTTLE k 10 1 1 -1", "ERR invalid quantity: must be a non-negative integer"},
      {"CL.THROTTLE k 10 1 1 x", "ERR invalid quantity: must be a non-negative integer"},
      {"CL.THROTTLE k 10 1 315360001", "ERR invalid period: above the maximum of 10 years"},
  });
}

}  // namespace sluice::server::testing
