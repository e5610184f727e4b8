// List operations on Store::Transaction (storage/types/lists.cc): order, both ends, indices, the
// middle operations, kinds and errors, and that a unit reads its own writes.
#include <doctest/doctest.h>

#include <limits>
#include <string>
#include <vector>

#include "sluice/transaction.h"
#include "test_util.h"

namespace sluice::testing {

namespace {
using SV = std::string_view;
using Txn = Store::Transaction;
using End = Store::Transaction::ListEnd;
using Els = std::vector<std::string>;
using Idx = std::vector<int64_t>;

int64_t Push(Txn& t, SV key, End end, std::initializer_list<SV> els) {
  std::vector<SV> v(els);
  auto r = t.ListPush(0, key, end, v, false);
  REQUIRE(r.ok());
  return *r;
}

Els All(Txn& t, SV key) { return *t.LRange(0, key, 0, -1); }
}  // namespace

TEST_CASE("list ops: pushes at both ends keep order; pops empty the key") {
  Fixture f;
  {
    Txn t(*f.store, {});
    CHECK(Push(t, "l", End::kRight, {"a", "b"}) == 2);
    CHECK(Push(t, "l", End::kLeft, {"x", "y"}) == 4);  // each pushed in turn: y x a b
    CHECK(All(t, "l") == Els{"y", "x", "a", "b"});
    CHECK(*t.LLen(0, "l") == 4);
    CHECK(**t.ListPop(0, "l", End::kLeft, 1) == Els{"y"});
    CHECK(**t.ListPop(0, "l", End::kRight, 2) == Els{"b", "a"});
    CHECK(**t.ListPop(0, "l", End::kRight, 0) == Els{});
    CHECK(**t.ListPop(0, "l", End::kLeft, 10) == Els{"x"});
    CHECK_FALSE(t.ListPop(0, "l", End::kLeft, 1)->has_value());
    CHECK(*t.LLen(0, "l") == 0);
    CHECK_FALSE(t.Type(0, "l")->has_value());
    const SV one[] = {"z"};
    CHECK(*t.ListPush(0, "l", End::kLeft, one, /*only_if_exists=*/true) == 0);
    CHECK_FALSE(t.Type(0, "l")->has_value());
    CHECK(Push(t, "l", End::kLeft, {"q"}) == 1);
    CHECK(*t.ListPush(0, "l", End::kRight, one, true) == 2);
    CHECK(All(t, "l") == Els{"q", "z"});
    REQUIRE(t.Commit().ok());
  }
  Txn t2(*f.store, {});
  CHECK(All(t2, "l") == Els{"q", "z"});
  CHECK(**t2.ObjectEncoding(0, "l") == "quicklist");
}

TEST_CASE("list ops: LINDEX, LSET, LRANGE clamping") {
  Fixture f;
  Txn t(*f.store, {});
  Push(t, "l", End::kRight, {"a", "b", "c", "d"});
  CHECK(**t.LIndex(0, "l", 0) == "a");
  CHECK(**t.LIndex(0, "l", -1) == "d");
  CHECK_FALSE(t.LIndex(0, "l", 4)->has_value());
  CHECK_FALSE(t.LIndex(0, "l", -5)->has_value());
  CHECK_FALSE(t.LIndex(0, "nokey", 0)->has_value());
  CHECK(t.LSet(0, "l", -2, "C").ok());
  CHECK(t.LSet(0, "l", 4, "x").message() == "index out of range");
  CHECK(t.LSet(0, "nokey", 0, "x").code() == Code::kNoSuchKey);
  CHECK(*t.LRange(0, "l", 1, 2) == Els{"b", "C"});
  CHECK(*t.LRange(0, "l", -100, 100) == Els{"a", "b", "C", "d"});
  CHECK(*t.LRange(0, "l", 2, 1) == Els{});
  CHECK(*t.LRange(0, "l", 4, 10) == Els{});
  CHECK(*t.LRange(0, "l", -2, -1) == Els{"C", "d"});
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  CHECK(*t.LRange(0, "l", kMin, kMax) == Els{"a", "b", "C", "d"});
  CHECK(*t.LRange(0, "nokey", 0, -1) == Els{});
}

TEST_CASE("list ops: LTRIM keeps a range or deletes the key") {
  Fixture f;
  Txn t(*f.store, {});
  Push(t, "l", End::kRight, {"a", "b", "c", "d", "e"});
  CHECK(t.LTrim(0, "l", 1, -2).ok());
  CHECK(All(t, "l") == Els{"b", "c", "d"});
  CHECK(*t.LLen(0, "l") == 3);
  Push(t, "l", End::kLeft, {"z"});
  CHECK(All(t, "l") == Els{"z", "b", "c", "d"});
  CHECK(t.LTrim(0, "l", 0, 100).ok());
  CHECK(*t.LLen(0, "l") == 4);
  CHECK(t.LTrim(0, "l", 5, 10).ok());
  CHECK_FALSE(t.Type(0, "l")->has_value());
  CHECK(t.LTrim(0, "nokey", 0, 1).ok());
}

TEST_CASE("list ops: LREM from either end, LINSERT, both rewrite the tail") {
  Fixture f;
  Txn t(*f.store, {});
  Push(t, "l", End::kRight, {"a", "x", "b", "x", "c", "x"});
  CHECK(*t.LRem(0, "l", -2, "x") == 2);
  CHECK(All(t, "l") == Els{"a", "x", "b", "c"});
  CHECK(*t.LRem(0, "l", 0, "nope") == 0);
  CHECK(*t.LRem(0, "l", 1, "x") == 1);
  CHECK(All(t, "l") == Els{"a", "b", "c"});
  CHECK(*t.LInsert(0, "l", false, "a", "0") == 4);
  CHECK(*t.LInsert(0, "l", true, "c", "9") == 5);
  CHECK(*t.LInsert(0, "l", true, "a", "1") == 6);
  CHECK(*t.LInsert(0, "l", false, "zz", "1") == -1);
  CHECK(*t.LInsert(0, "nokey", false, "a", "1") == 0);
  CHECK(All(t, "l") == Els{"0", "a", "1", "b", "c", "9"});
  CHECK(**t.LIndex(0, "l", 5) == "9");
  CHECK(*t.LLen(0, "l") == 6);
  CHECK(*t.LRem(0, "l", 0, "a") == 1);
  CHECK(*t.LRem(0, "l", std::numeric_limits<int64_t>::min(), "c") == 1);
  CHECK(All(t, "l") == Els{"0", "1", "b", "9"});
  Push(t, "only", End::kRight, {"x", "x"});
  CHECK(*t.LRem(0, "only", 0, "x") == 2);
  CHECK_FALSE(t.Type(0, "only")->has_value());
}

TEST_CASE("list ops: LPOS with rank, count and maxlen") {
  Fixture f;
  Txn t(*f.store, {});
  Push(t, "l", End::kRight, {"a", "b", "c", "1", "2", "3", "c", "c"});
  CHECK(*t.LPos(0, "l", "c", 1, 1, 0) == Idx{2});
  CHECK(*t.LPos(0, "l", "c", 1, 0, 0) == Idx{2, 6, 7});
  CHECK(*t.LPos(0, "l", "c", 2, 0, 0) == Idx{6, 7});
  CHECK(*t.LPos(0, "l", "c", -1, 0, 0) == Idx{7, 6, 2});
  CHECK(*t.LPos(0, "l", "c", -2, 1, 0) == Idx{6});
  CHECK(*t.LPos(0, "l", "c", 1, 0, 3) == Idx{2});
  CHECK(*t.LPos(0, "l", "c", -1, 0, 2) == Idx{7, 6});
  CHECK(*t.LPos(0, "l", "c", std::numeric_limits<int64_t>::min(), 1, 0) == Idx{7});
  CHECK(*t.LPos(0, "l", "zz", 1, 0, 0) == Idx{});
  CHECK(*t.LPos(0, "nokey", "c", 1, 0, 0) == Idx{});
}

TEST_CASE("list ops: LMOVE between lists and onto itself; LMPOP") {
  Fixture f;
  Txn t(*f.store, {});
  Push(t, "s", End::kRight, {"a", "b", "c"});
  CHECK(**t.LMove(0, "s", "d", End::kRight, End::kLeft) == "c");
  CHECK(**t.LMove(0, "s", "d", End::kLeft, End::kRight) == "a");
  CHECK(All(t, "s") == Els{"b"});
  CHECK(All(t, "d") == Els{"c", "a"});
  CHECK(**t.LMove(0, "d", "d", End::kLeft, End::kRight) == "c");  // rotation
  CHECK(All(t, "d") == Els{"a", "c"});
  CHECK(**t.LMove(0, "s", "d", End::kLeft, End::kLeft) == "b");
  CHECK_FALSE(t.Type(0, "s")->has_value());
  CHECK_FALSE(t.LMove(0, "s", "d", End::kLeft, End::kLeft)->has_value());
  const std::pair<SV, SV> kv[] = {{"f", "v"}};
  REQUIRE(t.HSet(0, "h", kv).ok());
  CHECK_FALSE(t.LMove(0, "s", "h", End::kLeft, End::kLeft)->has_value());  // src missing first
  CHECK(t.LMove(0, "d", "h", End::kLeft, End::kLeft).status().code() == Code::kWrongType);
  CHECK(All(t, "d") == Els{"b", "a", "c"});  // nothing moved

  const SV keys[] = {"none", "d", "h"};
  auto r = t.LMPop(0, keys, End::kRight, 2);
  REQUIRE(r.ok());
  CHECK((*r)->first == "d");
  CHECK((*r)->second == Els{"c", "a"});
  const SV missing[] = {"none", "none2"};
  CHECK_FALSE(t.LMPop(0, missing, End::kLeft, 1)->has_value());
  const SV typed[] = {"none", "h", "d"};
  CHECK(t.LMPop(0, typed, End::kLeft, 1).status().code() == Code::kWrongType);
}

TEST_CASE("list ops: WRONGTYPE on another kind, nothing written") {
  Fixture f;
  Txn t(*f.store, {});
  REQUIRE(t.Set(0, "s", "v", SetOptions{}).ok());
  const SV one[] = {"x"};
  CHECK(t.ListPush(0, "s", End::kLeft, one, false).status().code() == Code::kWrongType);
  CHECK(t.ListPop(0, "s", End::kLeft, 1).status().code() == Code::kWrongType);
  CHECK(t.LLen(0, "s").status().code() == Code::kWrongType);
  CHECK(t.LRange(0, "s", 0, -1).status().code() == Code::kWrongType);
  CHECK(t.LSet(0, "s", 0, "x").code() == Code::kWrongType);
  CHECK(t.LPos(0, "s", "x", 1, 0, 0).status().code() == Code::kWrongType);
  CHECK(**t.Get(0, "s") == "v");
}

TEST_CASE("list ops: many pushes and pops at both ends stay consistent") {
  Fixture f;
  std::vector<std::string> model;
  for (int round = 0; round < 3; ++round) {
    Txn t(*f.store, {});
    for (int i = 0; i < 50; ++i) {
      const std::string v = std::to_string(round * 100 + i);
      if (i % 3 == 0) {
        Push(t, "l", End::kLeft, {v});
        model.insert(model.begin(), v);
      } else {
        Push(t, "l", End::kRight, {v});
        model.push_back(v);
      }
    }
    auto popped = **t.ListPop(0, "l", End::kLeft, 7);
    CHECK(popped == Els(model.begin(), model.begin() + 7));
    model.erase(model.begin(), model.begin() + 7);
    REQUIRE(t.Commit().ok());
  }
  Txn t(*f.store, {});
  CHECK(All(t, "l") == model);
  CHECK(*t.LLen(0, "l") == static_cast<int64_t>(model.size()));
  CHECK(**t.LIndex(0, "l", 17) == model[17]);
}

}  // namespace sluice::testing
