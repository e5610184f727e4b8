// Hash and set operations on Store::Transaction (storage/types/hashes.cc, storage/types/sets.cc):
// results, kinds, errors, encodings, and that each unit reads its own writes.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "sluice/transaction.h"
#include "test_util.h"

namespace sluice::testing {

namespace {
using SV = std::string_view;
using Txn = Store::Transaction;
using FV = std::vector<std::pair<std::string, std::string>>;
using Members = std::vector<std::string>;

// Runs `fn` in a unit declaring `keys` (db 0) and commits it.
template <typename Fn>
auto InUnit(Store& store, std::initializer_list<SV> keys, Fn fn) {
  std::vector<KeyRef> refs;
  for (SV k : keys) refs.push_back({0, k});
  Txn t(store, refs);
  auto r = fn(t);
  REQUIRE(t.Commit().ok());
  return r;
}

Members Sorted(Members m) {
  std::sort(m.begin(), m.end());
  return m;
}
}  // namespace

TEST_CASE("hash ops: set, get, overwrite in place, delete to empty") {
  Fixture f;
  const std::pair<SV, SV> p1[] = {{"b", "1"}, {"a", "2"}, {"b", "3"}};
  CHECK(*InUnit(*f.store, {"h"}, [&](Txn& t) { return t.HSet(0, "h", p1); }) == 2);
  Txn t(*f.store, {});
  CHECK(*t.HGetAll(0, "h") == FV{{"b", "3"}, {"a", "2"}});
  CHECK(**t.HGet(0, "h", "a") == "2");
  CHECK_FALSE(t.HGet(0, "h", "zz")->has_value());
  CHECK(*t.HLen(0, "h") == 2);
  CHECK(*t.HStrLen(0, "h", "b") == 1);
  CHECK(*t.HExists(0, "h", "a"));
  const SV fields[] = {"a", "zz", "b"};
  CHECK(*t.HMGet(0, "h", fields) ==
        std::vector<std::optional<std::string>>{"2", std::nullopt, "3"});
  CHECK(*t.HDel(0, "h", fields) == 2);
  CHECK(*t.HLen(0, "h") == 0);
  CHECK_FALSE(t.Type(0, "h")->has_value());  // the unit sees its own delete
}

TEST_CASE("hash increments, errors and the listpack/hashtable flag") {
  Fixture f;
  REQUIRE(f.store->Set(0, "s", "x", SetPlain()).ok());
  Txn t(*f.store, {});
  CHECK(t.HSet(0, "s", std::vector<std::pair<SV, SV>>{{"f", "v"}}).status().code() ==
        Code::kWrongType);
  CHECK(*t.HIncrBy(0, "h", "n", 5) == 5);
  CHECK(*t.HIncrBy(0, "h", "n", -6) == -1);
  CHECK(t.HIncrBy(0, "h", "n", std::numeric_limits<int64_t>::min()).status().code() ==
        Code::kOverflow);
  CHECK(*t.HIncrByFloat(0, "h", "n", 0.5L) == "-0.5");
  CHECK(*t.HSetNx(0, "h", "w", "word"));
  CHECK_FALSE(*t.HSetNx(0, "h", "w", "other"));
  CHECK(t.HIncrBy(0, "h", "w", 1).status().message() == "hash value is not an integer");
  CHECK(t.HIncrByFloat(0, "h", "w", 1).status().message() == "hash value is not a float");
  CHECK(**t.ObjectEncoding(0, "h") == "listpack");
  CHECK(*t.HSet(0, "h", std::vector<std::pair<SV, SV>>{{"long", std::string(65, 'x')}}) == 1);
  CHECK(**t.ObjectEncoding(0, "h") == "hashtable");
  const SV long_field[] = {"long"};
  CHECK(*t.HDel(0, "h", long_field) == 1);
  CHECK(**t.ObjectEncoding(0, "h") == "hashtable");  // sticky, as in Redis
}

TEST_CASE("HRANDFIELD counts") {
  Fixture f;
  Txn t(*f.store, {});
  CHECK(t.HRandField(0, "h", 3)->empty());
  REQUIRE(t.HSet(0, "h", std::vector<std::pair<SV, SV>>{{"a", "1"}, {"b", "2"}, {"c", "3"}}).ok());
  CHECK(t.HRandField(0, "h", 2)->size() == 2);
  CHECK(t.HRandField(0, "h", 10)->size() == 3);
  CHECK(t.HRandField(0, "h", -10)->size() == 10);
  CHECK(t.HRandField(0, "h", 0)->empty());
  auto two = *t.HRandField(0, "h", 2);
  CHECK(two[0].first != two[1].first);  // distinct
  // A big hash: one pick seeks; the value comes with its field.
  std::vector<std::pair<SV, SV>> many;
  std::vector<std::string> names;
  for (int i = 0; i < 200; ++i) names.push_back("field" + std::to_string(i));
  for (const auto& n : names) many.emplace_back(n, n);
  REQUIRE(*t.HSet(0, "big", many) == 200);
  std::set<std::string> picked;
  for (int i = 0; i < 50; ++i) {
    auto one = *t.HRandField(0, "big", 1);
    REQUIRE(one.size() == 1);
    CHECK(one[0].first == one[0].second);
    picked.insert(one[0].first);
  }
  CHECK(picked.size() > 5);  // spread over the hash
}

TEST_CASE("set ops: add, remove, membership, intset order, pop, move") {
  Fixture f;
  Txn t(*f.store, {});
  const SV m1[] = {"10", "2", "-3", "2"};
  CHECK(*t.SAdd(0, "s", m1) == 3);
  CHECK(*t.SMembers(0, "s") == Members{"-3", "2", "10"});  // numeric order while an intset
  CHECK(**t.ObjectEncoding(0, "s") == "intset");
  const SV m2[] = {"b", "a"};
  CHECK(*t.SAdd(0, "s", m2) == 2);
  CHECK(**t.ObjectEncoding(0, "s") == "hashtable");
  CHECK(*t.SCard(0, "s") == 5);
  CHECK(*t.SIsMember(0, "s", "a"));
  CHECK(*t.SMIsMember(0, "s", m2) == std::vector<bool>{true, true});
  CHECK(*t.SRem(0, "s", m2) == 2);
  CHECK(*t.SMove(0, "s", "d", "2"));
  CHECK_FALSE(*t.SMove(0, "s", "d", "2"));
  CHECK(*t.SMembers(0, "d") == Members{"2"});
  auto popped = *t.SPop(0, "s", 100);
  CHECK(Sorted(popped) == Members{"-3", "10"});
  CHECK_FALSE(t.Type(0, "s")->has_value());
  CHECK(t.SRandMember(0, "d", -4)->size() == 4);
}

TEST_CASE("set algebra and STORE forms") {
  Fixture f;
  Txn t(*f.store, {}, TransactionOptions{.all_keys = true});
  const SV a[] = {"1", "2", "3", "x"};
  const SV b[] = {"2", "3", "4"};
  REQUIRE(t.SAdd(0, "a", a).ok());
  REQUIRE(t.SAdd(0, "b", b).ok());
  const SV ab[] = {"a", "b"};
  const SV a_missing[] = {"a", "missing"};
  using Op = Txn::SetOp;
  CHECK(Sorted(*t.SetAlgebra(0, Op::kInter, ab)) == Members{"2", "3"});
  CHECK(Sorted(*t.SetAlgebra(0, Op::kUnion, ab)) == Members{"1", "2", "3", "4", "x"});
  CHECK(Sorted(*t.SetAlgebra(0, Op::kDiff, ab)) == Members{"1", "x"});
  CHECK(t.SetAlgebra(0, Op::kInter, a_missing)->empty());
  CHECK(*t.SInterCard(0, ab, 1) == 1);
  CHECK(*t.SetAlgebraStore(0, Op::kUnion, "dst", ab) == 5);
  CHECK(**t.ObjectEncoding(0, "dst") == "hashtable");
  CHECK(*t.SetAlgebraStore(0, Op::kInter, "dst", a_missing) == 0);
  CHECK_FALSE(t.Type(0, "dst")->has_value());
  REQUIRE(t.Set(0, "str", "v", SetPlain()).ok());
  const SV with_str[] = {"missing", "str"};
  CHECK(t.SetAlgebra(0, Op::kInter, with_str).status().code() == Code::kWrongType);
}

TEST_CASE("collections survive reopen and keep their encodings") {
  Fixture f;
  const SV m[] = {"1", "2"};
  InUnit(*f.store, {"s"}, [&](Txn& t) { return t.SAdd(0, "s", m); });
  InUnit(*f.store, {"h"}, [&](Txn& t) {
    return t.HSet(0, "h", std::vector<std::pair<SV, SV>>{{"f", std::string(70, 'v')}});
  });
  f.Reopen();
  Txn t(*f.store, {});
  CHECK(*t.SMembers(0, "s") == Members{"1", "2"});
  CHECK(**t.ObjectEncoding(0, "h") == "hashtable");
  CHECK(t.HGet(0, "h", "f")->value().size() == 70);
}

TEST_CASE("SPOP one at a time from a big set returns every member once") {
  Fixture f;
  std::vector<std::string> members;
  for (int i = 0; i < 300; ++i) members.push_back("user:" + std::to_string(i));
  std::vector<SV> views(members.begin(), members.end());
  InUnit(*f.store, {"big"}, [&](Txn& t) { return t.SAdd(0, "big", views); });
  std::set<std::string> seen;
  std::set<std::string> first_picks;
  for (int i = 0; i < 300; ++i) {
    auto popped = InUnit(*f.store, {"big"}, [&](Txn& t) { return t.SPop(0, "big", 1); });
    REQUIRE(popped.ok());
    REQUIRE(popped->size() == 1);
    CHECK(seen.insert(popped->front()).second);
    if (i < 20) first_picks.insert(popped->front());
  }
  CHECK(seen.size() == 300);
  // Spread, not the set's first members in order (chance of that: negligible).
  std::vector<std::string> sorted_members(seen.begin(), seen.end());
  CHECK(first_picks != std::set<std::string>(sorted_members.begin(), sorted_members.begin() + 20));
  CHECK_FALSE(f.store->Type(0, "big")->has_value());
  Txn t(*f.store, {});
  CHECK(t.SRandMember(0, "big", 1)->empty());
}

}  // namespace sluice::testing
