// Sorted set operations on Store::Transaction (storage/types/zsets.cc): score order with member
// tie-breaks, negative and infinite scores, the ZADD flags, ranges, removals.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "sluice/transaction.h"
#include "test_util.h"

namespace sluice::testing {

namespace {
using SV = std::string_view;
using Txn = Store::Transaction;
using SM = Txn::ScoredMembers;
using Bound = Txn::ScoreBound;
constexpr Bound kMin{-INFINITY, false};
constexpr Bound kMax{INFINITY, false};

int64_t Add(Txn& t, SV key, std::vector<std::pair<double, SV>> pairs, Txn::ZAddFlags f = {}) {
  auto r = t.ZAdd(0, key, f, pairs);
  REQUIRE(r.ok());
  return r->count;
}
}  // namespace

TEST_CASE("zset ops: order by score then member, across signs and infinities") {
  Fixture f;
  Txn t(*f.store, {});
  CHECK(Add(t, "z",
            {{0, "b"},
             {-0.5, "n"},
             {0, "a"},
             {INFINITY, "i"},
             {-INFINITY, "m"},
             {-1e300, "big"},
             {2, "c"}}) == 7);
  CHECK(*t.ZRangeByRank(0, "z", 0, -1, false) == SM{{"m", -INFINITY},
                                                    {"big", -1e300},
                                                    {"n", -0.5},
                                                    {"a", 0},
                                                    {"b", 0},
                                                    {"c", 2},
                                                    {"i", INFINITY}});
  CHECK(*t.ZRangeByRank(0, "z", 0, 1, true) == SM{{"i", INFINITY}, {"c", 2}});
  CHECK(*t.ZCount(0, "z", Bound{0, true}, kMax) == 2);
  CHECK(*t.ZCount(0, "z", Bound{-0.5, false}, Bound{0, false}) == 3);
  CHECK(*t.ZRangeByScore(0, "z", kMin, kMax, true, 1, 2) == SM{{"c", 2}, {"b", 0}});
  CHECK(*t.ZRangeByScore(0, "z", kMin, kMax, false, -1, 2) == SM{});
  CHECK(*t.ZCard(0, "z") == 7);
  CHECK(**t.ZScore(0, "z", "n") == -0.5);
  CHECK_FALSE(t.ZScore(0, "z", "zz")->has_value());
}

TEST_CASE("zset ops: ZADD flags and INCR; removals delete the key at the end") {
  Fixture f;
  Txn t(*f.store, {});
  Add(t, "z", {{1, "a"}, {5, "b"}});
  Txn::ZAddFlags gt_ch;
  gt_ch.gt = gt_ch.ch = true;
  CHECK(Add(t, "z", {{3, "a"}, {2, "b"}, {1, "new"}}, gt_ch) == 2);  // a raised, new added
  CHECK(**t.ZScore(0, "z", "b") == 5);
  Txn::ZAddFlags incr;
  incr.incr = true;
  const std::pair<double, SV> one[] = {{-4, "b"}};
  CHECK(*t.ZAdd(0, "z", incr, one)->score == 1);
  CHECK(*t.ZRangeByRank(0, "z", 0, -1, false) == SM{{"b", 1}, {"new", 1}, {"a", 3}});
  const std::pair<double, SV> inf[] = {{INFINITY, "x"}};
  const std::pair<double, SV> ninf[] = {{-INFINITY, "x"}};
  REQUIRE(t.ZAdd(0, "z", incr, inf).ok());
  CHECK(t.ZAdd(0, "z", incr, ninf).status().code() == Code::kInvalidArgument);
  CHECK(**t.ZScore(0, "z", "x") == INFINITY);
  Txn::ZAddFlags xx;
  xx.xx = true;
  CHECK(Add(t, "nokey", {{1, "a"}}, xx) == 0);
  CHECK_FALSE(t.Type(0, "nokey")->has_value());
  CHECK(*t.ZRemRangeByScore(0, "z", Bound{1, true}, kMax) == 2);
  CHECK(*t.ZRemRangeByRank(0, "z", -1, -1) == 1);
  const SV members[] = {"b", "zz"};
  CHECK(*t.ZRem(0, "z", members) == 1);
  CHECK_FALSE(t.Type(0, "z")->has_value());
}

}  // namespace sluice::testing
