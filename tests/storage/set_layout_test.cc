// Sets in both layouts (a small set's members inside its metadata, storage/types/
// inline_elements.h; a big one's in the set column family): the same seeded random operations
// on stores whose sets are never inline, move out after a few members, and use the defaults,
// every reply compared; and the layout in the stored bytes.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "storage/types/collection.h"
#include "test_util.h"

namespace sluice::testing {

namespace {
using SV = std::string_view;
using Txn = Store::Transaction;

std::unique_ptr<Store> OpenWithLimits(const std::string& path, int64_t max_members,
                                      size_t max_bytes) {
  return OpenStoreWith(path, [&](Options& o) {
    o.set_inline_max_members = max_members;
    o.set_inline_max_bytes = max_bytes;
  });
}

std::string Show(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& m : v) out += m + ",";
  return out;
}

}  // namespace

TEST_CASE("set layouts: the same random operations give the same replies in every layout") {
  TempDir dirs[3];
  const int64_t members[] = {0, 5, 128};
  const size_t bytes[] = {0, 40, 1024};
  std::vector<std::unique_ptr<Store>> stores;
  for (int i = 0; i < 3; ++i)
    stores.push_back(OpenWithLimits(dirs[i].path(), members[i], bytes[i]));
  std::mt19937 rng(31);
  for (int step = 0; step < 2400; ++step) {
    // Every random choice first, so each store runs the very same operation.
    const int op = static_cast<int>(rng() % 8);
    const std::string key = "s" + std::to_string(rng() % 3),
                      other = "s" + std::to_string(rng() % 3);
    // Integers (an intset in Redis's terms) and words (a hashtable).
    const auto member = [&rng] {
      const int k = static_cast<int>(rng() % 24);
      return k < 12 ? std::to_string(k - 4) : "w" + std::to_string(k);
    };
    const std::string m1 = member(), m2 = member();
    std::vector<std::string> replies;
    for (auto& s : stores) {
      Txn t(*s, {});
      const SV two[] = {m1, m2};
      std::string r;
      switch (op) {
        case 0:
        case 1:
          r = std::to_string(*t.SAdd(0, key, two));
          break;
        case 2:
          r = std::to_string(*t.SRem(0, key, two));
          break;
        case 3:
          r = std::to_string(*t.SIsMember(0, key, m1)) + "/" + std::to_string(*t.SCard(0, key));
          break;
        case 4:
          r = Show(*t.SMembers(0, key));
          break;
        case 5:
          r = std::to_string(*t.SMove(0, key, other, m1));
          break;
        case 6: {
          const SV keys[] = {key, other};
          r = std::to_string(*t.SetAlgebraStore(0, Txn::SetOp::kUnion, "u", keys)) + "/" +
              Show(*t.SMembers(0, "u"));
          break;
        }
        case 7: {
          auto page = *t.SScan(0, key, 0, std::nullopt, 100);
          std::vector<std::string> got;
          for (auto& [m, v] : page.items) got.push_back(m);
          std::sort(got.begin(), got.end());
          r = Show(got) + std::to_string(page.next_cursor == 0);
          break;
        }
      }
      REQUIRE(t.Commit().ok());
      replies.push_back(r);
    }
    CAPTURE(op);
    CHECK(replies[1] == replies[0]);
    CHECK(replies[2] == replies[0]);
    if (step % 800 == 799) {
      for (int i = 0; i < 3; ++i) {
        stores[i].reset();
        stores[i] = OpenWithLimits(dirs[i].path(), members[i], bytes[i]);
      }
    }
  }
}

TEST_CASE("set layouts: a small set is one entry; it moves out past a limit and stays out") {
  TempDir dir;
  const auto add = [&](int from, int to) {
    auto store = OpenWithLimits(dir.path(), 8, 1024);
    Txn t(*store, {});
    for (int i = from; i < to; ++i) {
      const std::string m = "w" + std::to_string(i);
      const SV one[] = {m};
      REQUIRE(t.SAdd(0, "s", one).ok());
    }
    REQUIRE(t.Commit().ok());
  };
  add(0, 8);
  StoredCollection s = ReadStoredCollection(dir.path(), "s", {"set"});
  CHECK(s.has(internal::kMetaInlineElements));
  CHECK(s.has(internal::kMetaBigEncoding));  // words: Redis's hashtable, inline all the same
  CHECK(s.count == 8);
  CHECK(s.entries["set"] == 0);
  add(8, 9);
  s = ReadStoredCollection(dir.path(), "s", {"set"});
  CHECK_FALSE(s.has(internal::kMetaInlineElements));
  CHECK(s.entries["set"] == 9);
  {
    auto store = OpenWithLimits(dir.path(), 8, 1024);
    Txn t(*store, {});
    const SV drop[] = {"w0", "w1", "w2", "w3", "w4", "w5", "w6"};
    CHECK(*t.SRem(0, "s", drop) == 7);
    REQUIRE(t.Commit().ok());
  }
  s = ReadStoredCollection(dir.path(), "s", {"set"});
  CHECK_FALSE(s.has(internal::kMetaInlineElements));
  CHECK(s.entries["set"] == 2);
}

}  // namespace sluice::testing
