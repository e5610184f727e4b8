// Sorted sets in both layouts (storage/types/inline_elements.h: a small set's entries inside its
// metadata; a big one's in the zset and zscore column families): the same seeded random
// operations on stores whose sets are always in the column families, move out after a few
// members, and use the defaults, every reply compared; and checks of the layout in the stored
// bytes (moving out, the head of a big set, RENAME/COPY/MOVE, *STORE destinations).
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "storage/types/collection.h"
#include "test_util.h"

namespace sluice::testing {

namespace {
using SV = std::string_view;
using Txn = Store::Transaction;
using Scored = Txn::ScoredMembers;
using Bound = Txn::ScoreBound;
using Lex = Txn::LexBound;

std::unique_ptr<Store> OpenWithLimits(const std::string& path, int64_t max_members,
                                      size_t max_bytes) {
  return OpenStoreWith(path, [&](Options& o) {
    o.zset_inline_max_members = max_members;
    o.zset_inline_max_bytes = max_bytes;
  });
}

struct Stored {
  bool exists = false;
  bool is_inline = false;
  bool big_encoding = false;
  int64_t count = 0;
  int64_t zset_entries = 0;
  int64_t zscore_entries = 0;  // the head record, when there is one, included
};

Stored ReadStored(const std::string& path, SV key, int db = 0) {
  StoredCollection c = ReadStoredCollection(path, key, {"zset", "zscore"}, db);
  return Stored{c.exists,
                c.has(internal::kMetaInlineElements),
                c.has(internal::kMetaBigEncoding),
                c.count,
                c.entries["zset"],
                c.entries["zscore"]};
}

void Add(Store& s, SV key, int from, int to, const std::string& suffix = "") {
  Txn t(s, {});
  for (int i = from; i < to; ++i) {
    const std::string member = "m" + std::to_string(i) + suffix;
    const std::pair<double, SV> one[] = {{static_cast<double>(i % 7), member}};
    REQUIRE(t.ZAdd(0, key, {}, one).ok());
  }
  REQUIRE(t.Commit().ok());
}

Scored All(Store& s, SV key, int db = 0) {
  Txn t(s, {});
  auto r = t.ZRangeByRank(db, key, 0, -1, false);
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  return *r;
}

// One store per layout setting, the same operations on each; every reply must be the same.
class Differential {
 public:
  Differential() {
    stores_.push_back(OpenWithLimits(dirs_[0].path(), 0, 0));
    stores_.push_back(OpenWithLimits(dirs_[1].path(), 6, 160));
    Options defaults;
    stores_.push_back(OpenWithLimits(dirs_[2].path(), defaults.zset_inline_max_members,
                                     defaults.zset_inline_max_bytes));
  }

  void Step(std::mt19937& rng) {
    // Every random choice is drawn first, so each store runs the very same operation.
    const int op = static_cast<int>(rng() % 12);
    const std::string key = "z" + std::to_string(rng() % 3);
    const auto member = [&rng] { return "m" + std::to_string(rng() % 20); };
    // Integer scores with repeats (ties order by member), -0 and 0, and now and then a long
    // member (Redis's listpack limit is 64 bytes: the set moves out in every layout).
    const auto score = [&rng] {
      const int k = static_cast<int>(rng() % 12);
      return k == 0 ? -0.0 : k == 1 ? 0.0 : static_cast<double>(k % 6) - 2;
    };
    const std::string long_member = std::string(70, 'L') + std::to_string(rng() % 3);
    const double a = static_cast<double>(rng() % 6) - 3, b = a + static_cast<double>(rng() % 4);
    const bool f1 = rng() % 2 == 0, f2 = rng() % 2 == 0, f3 = rng() % 2 == 0;
    const int64_t i1 = static_cast<int64_t>(rng() % 5) - 2,
                  i2 = static_cast<int64_t>(rng() % 8) - 2;
    const std::string m1 = member();
    std::vector<std::string> ms;
    std::vector<double> scores;
    const int n = 1 + static_cast<int>(rng() % 3);
    for (int i = 0; i < n; ++i) {
      ms.push_back(rng() % 25 == 0 ? long_member : member());
      scores.push_back(score());
    }
    Txn::ZAddFlags flags;
    flags.ch = f1;
    flags.gt = rng() % 5 == 0;
    std::vector<std::string> replies;
    for (auto& s : stores_) {
      Txn t(*s, {});
      std::string r;
      switch (op) {
        case 0:
        case 1: {  // ZADD of 1-3 pairs, sometimes with flags
          std::vector<std::pair<double, SV>> pairs;
          for (int i = 0; i < n; ++i) pairs.emplace_back(scores[i], ms[i]);
          auto z = t.ZAdd(0, key, flags, pairs);
          r = z.ok() ? std::to_string(z->count) : z.status().ToString();
          break;
        }
        case 2: {
          const SV one[] = {m1};
          r = std::to_string(*t.ZRem(0, key, one));
          break;
        }
        case 3:
          r = Show(*t.ZRangeByRank(0, key, i1, i2, f1));
          break;
        case 4:
          r = Show(*t.ZRangeByScore(0, key, Bound{a, f1}, Bound{b, f2}, f3, i1 + 2, i2));
          break;
        case 5:
          r = std::to_string(*t.ZRemRangeByScore(0, key, Bound{a, false}, Bound{b, false}));
          break;
        case 6: {
          auto rank = *t.ZRank(0, key, m1, f1);
          r = rank ? std::to_string(*rank) : "nil";
          break;
        }
        case 7: {
          auto sc = *t.ZScore(0, key, m1);
          r = sc ? std::to_string(*sc) + (std::signbit(*sc) ? "-" : "+") : "nil";
          r += "/" + std::to_string(*t.ZCard(0, key)) + "/" +
               std::to_string(*t.ZCount(0, key, Bound{a, false}, Bound{b, true}));
          break;
        }
        case 8:
          r = std::to_string(*t.ZRemRangeByRank(0, key, 0, i1 + 2));
          break;
        case 9: {
          Lex lo{Lex::Kind::kMember, m1, f1};
          Lex hi{Lex::Kind::kMax, "", false};
          r = Show(*t.ZRangeByLex(0, key, lo, hi, false, 0, -1)) + "/" +
              std::to_string(*t.ZLexCount(0, key, lo, hi));
          break;
        }
        case 10:
          r = Show(*t.ZPop(0, key, f1 ? Txn::ZEnd::kMin : Txn::ZEnd::kMax, 1 + (f2 ? 1 : 0)));
          break;
        case 11: {
          static const SV keys[] = {"z0", "z1", "z2"};
          Txn::ZAlgebraArgs args;
          args.op = Txn::SetOp::kUnion;
          args.keys = keys;
          auto stored = t.ZSetAlgebraStore(0, key, args);
          r = stored.ok() ? std::to_string(*stored) : stored.status().ToString();
          break;
        }
      }
      REQUIRE(t.Commit().ok());
      replies.push_back(r);
    }
    CAPTURE(op);
    CHECK(replies[1] == replies[0]);
    CHECK(replies[2] == replies[0]);
  }

  void CheckAll() {
    for (const char* key : {"z0", "z1", "z2"}) {
      const Scored want = All(*stores_[0], key);
      CHECK(All(*stores_[1], key) == want);
      CHECK(All(*stores_[2], key) == want);
    }
  }

  void Reopen() {
    Options defaults;
    const int64_t members[] = {0, 6, defaults.zset_inline_max_members};
    const size_t bytes[] = {0, 160, defaults.zset_inline_max_bytes};
    for (size_t i = 0; i < stores_.size(); ++i) {
      stores_[i].reset();
      stores_[i] = OpenWithLimits(dirs_[i].path(), members[i], bytes[i]);
    }
  }

 private:
  static std::string Show(const Scored& s) {
    std::string out;
    for (const auto& [m, sc] : s) out += m + "=" + std::to_string(sc) + ",";
    return out;
  }

  TempDir dirs_[3];
  std::vector<std::unique_ptr<Store>> stores_;
};

}  // namespace

TEST_CASE("zset layouts: the same random operations give the same replies in every layout") {
  Differential d;
  std::mt19937 rng(29);
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 700; ++i) {
      d.Step(rng);
      if (i % 100 == 0) d.CheckAll();
    }
    d.Reopen();
    d.CheckAll();
  }
}

TEST_CASE("zset layouts: a small set is one entry; it moves out past a limit, with its head") {
  TempDir dir;
  {
    auto store = OpenWithLimits(dir.path(), 128, 2048);
    Add(*store, "small", 0, 10);
    Add(*store, "grows", 0, 128);
    Add(*store, "long", 0, 3);
  }
  Stored s = ReadStored(dir.path(), "small");
  CHECK(s.is_inline);
  CHECK(s.count == 10);
  CHECK(s.zset_entries == 0);
  CHECK(s.zscore_entries == 0);
  CHECK_FALSE(ReadStored(dir.path(), "grows").is_inline);  // past 2 KB long before 128 members
  {
    auto store = OpenWithLimits(dir.path(), 128, 64 * 1024);
    Add(*store, "wide", 0, 128);
    Add(*store, "long", 3, 4, std::string(70, 'x'));  // past Redis's 64-byte member limit
  }
  s = ReadStored(dir.path(), "wide");
  CHECK(s.is_inline);
  CHECK(s.count == 128);
  s = ReadStored(dir.path(), "long");
  CHECK_FALSE(s.is_inline);
  CHECK(s.big_encoding);
  CHECK(s.zset_entries == 4);
  CHECK(s.zscore_entries == 5);  // and the head record: every big set keeps one
  {
    auto store = OpenWithLimits(dir.path(), 128, 64 * 1024);
    Add(*store, "wide", 128, 129);  // the 129th member: Redis's skiplist, and a head of 32
    const Scored all = All(*store, "wide");
    REQUIRE(all.size() == 129);
    CHECK(all.front() == std::make_pair(std::string("m0"), 0.0));
    Txn t(*store, {});
    CHECK(*t.ZRangeByRank(0, "wide", 0, 2, false) == Scored{{"m0", 0}, {"m105", 0}, {"m112", 0}});
  }
  s = ReadStored(dir.path(), "wide");
  CHECK_FALSE(s.is_inline);
  CHECK(s.big_encoding);
  CHECK(s.zset_entries == 129);
  CHECK(s.zscore_entries == 130);  // and the head record
}

TEST_CASE("zset layouts: RENAME, COPY, MOVE and ZUNIONSTORE of inline sets") {
  TempDir dir;
  auto store = OpenWithLimits(dir.path(), 128, 2048);
  Add(*store, "z", 0, 5);
  const Scored want = All(*store, "z");
  {
    Txn t(*store, {});
    REQUIRE(*t.Copy(0, "z", 0, "c", false));
    REQUIRE(*t.Rename(0, "z", "r", false));
    REQUIRE(*t.Move(0, 1, "c"));
    Txn::ZAlgebraArgs args;
    args.op = Txn::SetOp::kUnion;
    static const SV keys[] = {"r"};
    args.keys = keys;
    REQUIRE(*t.ZSetAlgebraStore(0, "u", args) == 5);
    REQUIRE(t.Commit().ok());
  }
  CHECK(All(*store, "r") == want);
  CHECK(All(*store, "c", 1) == want);
  CHECK(All(*store, "u") == want);
  CHECK(All(*store, "z").empty());
  store.reset();
  for (auto [key, db] : {std::pair{"r", 0}, {"c", 1}, {"u", 0}}) {
    CAPTURE(key);
    const Stored s = ReadStored(dir.path(), key, db);
    CHECK(s.is_inline);
    CHECK(s.zset_entries == 0);
    CHECK(s.zscore_entries == 0);
  }
}

}  // namespace sluice::testing
