// The sorted set ops beyond ZADD and score/rank ranges: lex ranges (zset_ranges.cc), ranks,
// ZMSCORE, ZRANGESTORE, pops and ZMPOP, random picks, ZSCAN (zset_pops.cc), and the algebra
// (zset_algebra.cc).
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
using Lex = Txn::LexBound;
using Kind = Lex::Kind;

void Add(Txn& t, SV key, std::vector<std::pair<double, SV>> pairs) {
  REQUIRE(t.ZAdd(0, key, {}, pairs).ok());
}
Lex Incl(std::string m) { return Lex{Kind::kMember, std::move(m), false}; }
Lex Excl(std::string m) { return Lex{Kind::kMember, std::move(m), true}; }
const Lex kLo{Kind::kMin, "", true};
const Lex kHi{Kind::kMax, "", true};

std::vector<std::string> Members(const SM& sm) {
  std::vector<std::string> out;
  for (const auto& [m, s] : sm) out.push_back(m);
  return out;
}
using Names = std::vector<std::string>;
}  // namespace

TEST_CASE("zset lex ranges: bounds, exclusivity, rev, limit, removal") {
  Fixture f;
  Txn t(*f.store, {});
  Add(t, "z", {{0, "a"}, {0, "b"}, {0, "c"}, {0, "d"}, {0, "e"}});
  CHECK(*t.ZLexCount(0, "z", kLo, kHi) == 5);
  CHECK(*t.ZLexCount(0, "z", Incl("b"), Excl("d")) == 2);
  CHECK(*t.ZLexCount(0, "z", kHi, kLo) == 0);
  CHECK(*t.ZLexCount(0, "z", kLo, kLo) == 0);  // "-" counts as exclusive
  CHECK(*t.ZLexCount(0, "z", Incl("c"), Incl("c")) == 1);
  CHECK(*t.ZLexCount(0, "z", Excl("c"), Incl("c")) == 0);
  CHECK(Members(*t.ZRangeByLex(0, "z", Excl("a"), kHi, false, 1, 2)) == Names{"c", "d"});
  CHECK(Members(*t.ZRangeByLex(0, "z", kLo, Incl("c"), true, 0, -1)) == Names{"c", "b", "a"});
  CHECK(Members(*t.ZRangeByLex(0, "z", kLo, kHi, false, -1, 2)).empty());
  CHECK(Members(*t.ZRangeByLex(0, "z", Incl("bb"), Incl("dd"), false, 0, -1)) == Names{"c", "d"});
  CHECK(*t.ZRemRangeByLex(0, "z", Incl("b"), Excl("e")) == 3);
  CHECK(Members(*t.ZRangeByLex(0, "z", kLo, kHi, false, 0, -1)) == Names{"a", "e"});
  CHECK(*t.ZRemRangeByLex(0, "z", kLo, kHi) == 2);
  CHECK(*t.Exists(0, std::vector<SV>{"z"}) == 0);
}

TEST_CASE("zset lex ranges in a big set of one score seek to the bound, both ways") {
  Fixture f;
  Txn t(*f.store, {});
  std::vector<std::string> names;
  for (int i = 0; i < 300; ++i) names.push_back("m" + std::to_string(1000 + i));
  for (const auto& n : names) Add(t, "big", {{7, n}});
  CHECK(*t.ZLexCount(0, "big", Incl("m1100"), Excl("m1200")) == 100);
  CHECK(Members(*t.ZRangeByLex(0, "big", Excl("m1100"), kHi, false, 1, 2)) ==
        Names{"m1102", "m1103"});
  CHECK(Members(*t.ZRangeByLex(0, "big", kLo, Excl("m1100"), true, 0, 2)) ==
        Names{"m1099", "m1098"});
  CHECK(Members(*t.ZRangeByLex(0, "big", Incl("m1298x"), kHi, false, 0, -1)) == Names{"m1299"});
  CHECK(t.ZRangeByLex(0, "big", Incl("n"), kHi, false, 0, -1)->empty());
  CHECK(*t.ZRemRangeByLex(0, "big", kLo, Excl("m1010")) == 10);
  CHECK(**t.ZRank(0, "big", "m1010", false) == 0);
}

TEST_CASE("zset lex ranges over mixed scores walk the set in score order, as Redis's listpack") {
  Fixture f;
  Txn t(*f.store, {});
  Add(t, "z", {{1, "b"}, {2, "a"}, {3, "c"}});
  // From the first member >= "[a" (b, at score 1) while members stay <= "[b": b, then a.
  CHECK(Members(*t.ZRangeByLex(0, "z", Incl("a"), Incl("b"), false, 0, -1)) == Names{"b", "a"});
  // The first member ("b") is above max "(b": empty.
  CHECK(t.ZRangeByLex(0, "z", kLo, Excl("b"), false, 0, -1)->empty());
}

TEST_CASE("zset ranks, ZMSCORE and ZRANGESTORE") {
  Fixture f;
  Txn t(*f.store, {});
  Add(t, "z", {{1, "a"}, {2, "b"}, {3, "c"}});
  CHECK(**t.ZRank(0, "z", "a", false) == 0);
  CHECK(**t.ZRank(0, "z", "a", true) == 2);
  CHECK_FALSE(t.ZRank(0, "z", "q", false)->has_value());
  CHECK_FALSE(t.ZRank(0, "none", "a", false)->has_value());
  const std::vector<SV> ms{"c", "q"};
  auto scores = t.ZMScore(0, "z", ms);
  REQUIRE(scores->size() == 2);
  CHECK((*scores)[0] == 3.0);
  CHECK_FALSE((*scores)[1].has_value());
  Txn::ZRangeQuery q;
  q.by = Txn::ZRangeQuery::By::kScore;
  q.score_min = {2, false};
  q.score_max = {INFINITY, false};
  CHECK(*t.ZRangeStore(0, "d", "z", q) == 2);
  CHECK(*t.ZRange(0, "d", Txn::ZRangeQuery{}) == SM{{"b", 2}, {"c", 3}});
  REQUIRE(t.Set(0, "s", "str", {}).ok());
  CHECK(t.ZRangeStore(0, "d", "s", q).status().code() == Code::kWrongType);
  CHECK(*t.ZRangeStore(0, "s", "missing", q) == 0);  // the destination goes
  CHECK(*t.Exists(0, std::vector<SV>{"s"}) == 0);
}

TEST_CASE("zset pops: ends, counts, the key goes with its last member; ZMPOP's first non-empty") {
  Fixture f;
  Txn t(*f.store, {});
  Add(t, "z", {{1, "a"}, {2, "b"}, {3, "c"}});
  CHECK(*t.ZPop(0, "z", Txn::ZEnd::kMin, 1) == SM{{"a", 1}});
  CHECK(*t.ZPop(0, "z", Txn::ZEnd::kMax, 0) == SM{});
  CHECK(*t.ZPop(0, "z", Txn::ZEnd::kMax, 5) == SM{{"c", 3}, {"b", 2}});
  CHECK(*t.Exists(0, std::vector<SV>{"z"}) == 0);
  Add(t, "z2", {{5, "x"}, {6, "y"}});
  const std::vector<SV> keys{"none", "z2"};
  auto r = t.ZMPop(0, keys, Txn::ZEnd::kMax, 1);
  REQUIRE(r->has_value());
  CHECK((*r)->first == "z2");
  CHECK((*r)->second == SM{{"y", 6}});
  const std::vector<SV> empty{"none"};
  CHECK_FALSE(t.ZMPop(0, empty, Txn::ZEnd::kMin, 1)->has_value());
  REQUIRE(t.Set(0, "s", "str", {}).ok());
  const std::vector<SV> wrong{"s", "z2"};
  CHECK(t.ZMPop(0, wrong, Txn::ZEnd::kMin, 1).status().code() == Code::kWrongType);
}

TEST_CASE("zset random picks and ZSCAN") {
  Fixture f;
  Txn t(*f.store, {});
  Add(t, "z", {{1, "a"}, {2, "b"}, {3, "c"}});
  CHECK(t.ZRandMember(0, "z", 2)->size() == 2);
  CHECK(t.ZRandMember(0, "z", 10)->size() == 3);
  CHECK(t.ZRandMember(0, "z", -7)->size() == 7);
  CHECK(t.ZRandMember(0, "none", 3)->empty());
  auto scan = t.ZScan(0, "z", 0, std::nullopt, 10);
  CHECK(scan->next_cursor == 0);
  CHECK(scan->items == SM{{"a", 1}, {"b", 2}, {"c", 3}});
  // A big set (129 members) is paged.
  std::vector<std::string> names;
  for (int i = 0; i < 200; ++i) names.push_back("m" + std::to_string(i));
  for (const auto& n : names) Add(t, "big", {{1.5, n}});
  uint64_t cursor = 0;
  size_t seen = 0;
  int pages = 0;
  do {
    auto page = t.ZScan(0, "big", cursor, std::nullopt, 50);
    REQUIRE(page.ok());
    for (const auto& [m, s] : page->items) CHECK(s == 1.5);
    seen += page->items.size();
    cursor = page->next_cursor;
    ++pages;
  } while (cursor != 0 && pages < 100);
  CHECK(seen == 200);
  CHECK(pages > 1);
  for (int i = 0; i < 20; ++i) {  // one pick from a big set seeks
    auto one = t.ZRandMember(0, "big", 1);
    REQUIRE(one->size() == 1);
    CHECK(one->front().first.rfind("m", 0) == 0);
    CHECK(one->front().second == 1.5);
  }
}

TEST_CASE("zset algebra: weights, aggregates, sets as inputs, NaN as 0, store and card") {
  Fixture f;
  Txn t(*f.store, {});
  Add(t, "a", {{1, "x"}, {2, "y"}, {INFINITY, "i"}});
  Add(t, "b", {{10, "y"}, {20, "z"}, {-INFINITY, "i"}});
  const std::vector<SV> members{"y", "w"};
  REQUIRE(t.SAdd(0, "s", members).ok());
  const std::vector<SV> ab{"a", "b"};
  Txn::ZAlgebraArgs args{.op = Txn::SetOp::kUnion, .keys = ab, .weights = {}};
  CHECK(*t.ZSetAlgebra(0, args) == SM{{"i", 0}, {"x", 1}, {"y", 12}, {"z", 20}});
  const std::vector<double> w{2, 0};
  args.weights = w;
  args.aggregate = Txn::ZAggregate::kMax;
  CHECK(*t.ZSetAlgebra(0, args) == SM{{"z", 0}, {"x", 2}, {"y", 4}, {"i", INFINITY}});
  const std::vector<SV> as{"a", "s"};
  Txn::ZAlgebraArgs inter{.op = Txn::SetOp::kInter, .keys = as, .weights = {}};
  CHECK(*t.ZSetAlgebra(0, inter) == SM{{"y", 3}});
  Txn::ZAlgebraArgs diff{.op = Txn::SetOp::kDiff, .keys = as, .weights = {}};
  CHECK(*t.ZSetAlgebra(0, diff) == SM{{"x", 1}, {"i", INFINITY}});
  CHECK(*t.ZSetAlgebraStore(0, "d", diff) == 2);
  CHECK(*t.ZCard(0, "d") == 2);
  const std::vector<SV> none{"missing"};
  Txn::ZAlgebraArgs empty{.op = Txn::SetOp::kUnion, .keys = none, .weights = {}};
  CHECK(*t.ZSetAlgebraStore(0, "d", empty) == 0);
  CHECK(*t.Exists(0, std::vector<SV>{"d"}) == 0);
  CHECK(*t.ZInterCard(0, ab, 0) == 2);
  CHECK(*t.ZInterCard(0, ab, 1) == 1);
  REQUIRE(t.Set(0, "str", "v", {}).ok());
  const std::vector<SV> bad{"a", "str"};
  Txn::ZAlgebraArgs wrong{.op = Txn::SetOp::kUnion, .keys = bad, .weights = {}};
  CHECK(t.ZSetAlgebra(0, wrong).status().code() == Code::kWrongType);
}

}  // namespace sluice::testing
