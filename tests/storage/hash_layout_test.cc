// The two hash layouts (storage/types/hash_body.h): a seeded random run of the hash operations
// against a model of Redis's semantics (fields in insertion order, as Redis's listpack keeps
// them), with limits that keep hashes always big, that move them out after a few fields, and the
// defaults; and checks of the layout itself in the stored bytes.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <optional>
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
using Fields = std::vector<std::pair<std::string, std::string>>;

std::unique_ptr<Store> OpenWithLimits(const std::string& path, int64_t max_fields,
                                      size_t max_bytes) {
  return OpenStoreWith(path, [&](Options& o) {
    o.hash_inline_max_fields = max_fields;
    o.hash_inline_max_bytes = max_bytes;
  });
}

// How a hash is stored, read from the closed store's bytes: whether its metadata holds it
// inline, and how many field entries its version has in the hash column family.
struct Stored {
  bool exists = false;
  bool is_inline = false;
  bool big_encoding = false;
  int64_t count = 0;
  int64_t field_entries = 0;
};

Stored ReadStored(const std::string& path, SV key) {
  StoredCollection c = ReadStoredCollection(path, key, {"hash"});
  return Stored{c.exists, c.has(internal::kMetaInline), c.has(internal::kMetaBigEncoding), c.count,
                c.entries["hash"]};
}

Fields All(Store& s, SV key) {
  Txn t(s, {});
  auto r = t.HGetAll(0, key);
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  return *r;
}

void SetN(Store& s, SV key, int from, int to, const std::string& value) {
  Txn t(s, {});
  for (int i = from; i < to; ++i) {
    const std::string field = "f" + std::to_string(i);
    const std::pair<SV, SV> one[] = {{field, value}};
    REQUIRE(t.HSet(0, key, one).ok());
  }
  REQUIRE(t.Commit().ok());
}

// ---- The model: Redis 7.0's listpack hash, fields in insertion order.

class RandomRun {
 public:
  RandomRun(Store* store, uint32_t seed) : store_(store), rng_(seed) {}

  // One random operation on the store and the model; CHECKs that both answer alike.
  void Step() {
    const std::string key = Key();
    Fields& m = model_[key];
    Txn t(*store_, {});
    switch (Pick(9)) {
      case 0:
      case 1: {  // HSET of 1-4 pairs (a field may repeat: the last value wins)
        std::vector<std::pair<std::string, std::string>> pairs;
        for (int n = Pick(4) + 1; n > 0; --n) pairs.emplace_back(Field(), Value());
        std::vector<std::pair<SV, SV>> views(pairs.begin(), pairs.end());
        int64_t added = 0;
        for (const auto& [f, v] : pairs) added += Put(m, f, v) ? 1 : 0;
        CHECK(*t.HSet(0, key, views) == added);
        break;
      }
      case 2: {  // HSETNX
        const std::string f = Field(), v = Value();
        const bool isnew = Find(m, f) == m.end();
        if (isnew) Put(m, f, v);
        CHECK(*t.HSetNx(0, key, f, v) == isnew);
        break;
      }
      case 3: {  // HDEL of 1-3 fields
        std::vector<std::string> fields;
        for (int n = Pick(3) + 1; n > 0; --n) fields.push_back(Field());
        std::vector<SV> views(fields.begin(), fields.end());
        int64_t removed = 0;
        for (const std::string& f : fields) {
          auto at = Find(m, f);
          if (at == m.end()) continue;
          m.erase(at);
          ++removed;
        }
        CHECK(*t.HDel(0, key, views) == removed);
        break;
      }
      case 4: {  // HINCRBY: an integer field, or the error on a non-integer one
        const std::string f = Field();
        const int64_t delta = Pick(21) - 10;
        auto at = Find(m, f);
        auto r = t.HIncrBy(0, key, f, delta);
        if (at != m.end() && !IsInt(at->second)) {
          CHECK(r.status().code() == Code::kInvalidArgument);
          break;
        }
        const int64_t want = (at == m.end() ? 0 : std::stoll(at->second)) + delta;
        Put(m, f, std::to_string(want));
        CHECK(*r == want);
        break;
      }
      case 5: {  // HGET
        const std::string f = Field();
        auto at = Find(m, f);
        auto r = t.HGet(0, key, f);
        REQUIRE(r.ok());
        CHECK(*r == (at == m.end() ? std::nullopt : std::optional<std::string>(at->second)));
        break;
      }
      case 6: {  // HMGET
        std::vector<std::string> fields = {Field(), Field(), Field()};
        std::vector<SV> views(fields.begin(), fields.end());
        std::vector<std::optional<std::string>> want;
        for (const std::string& f : fields) {
          auto at = Find(m, f);
          want.push_back(at == m.end() ? std::nullopt : std::optional<std::string>(at->second));
        }
        CHECK(*t.HMGet(0, key, views) == want);
        break;
      }
      case 7:  // HGETALL, in insertion order
        CHECK(*t.HGetAll(0, key) == m);
        break;
      case 8: {  // HLEN, HEXISTS, HSTRLEN
        const std::string f = Field();
        auto at = Find(m, f);
        CHECK(*t.HLen(0, key) == static_cast<int64_t>(m.size()));
        CHECK(*t.HExists(0, key, f) == (at != m.end()));
        CHECK(*t.HStrLen(0, key, f) ==
              (at == m.end() ? 0 : static_cast<int64_t>(at->second.size())));
        break;
      }
    }
    REQUIRE(t.Commit().ok());
  }

  void CheckAll() {
    Txn t(*store_, {});
    for (const auto& [key, m] : model_) {
      CHECK(*t.HGetAll(0, key) == m);
      CHECK(*t.HLen(0, key) == static_cast<int64_t>(m.size()));
    }
  }

  void set_store(Store* store) { store_ = store; }

 private:
  static Fields::iterator Find(Fields& m, const std::string& f) {
    return std::find_if(m.begin(), m.end(), [&](const auto& fv) { return fv.first == f; });
  }
  // True when the field is new (appended); an existing field keeps its place.
  static bool Put(Fields& m, const std::string& f, const std::string& v) {
    auto at = Find(m, f);
    if (at != m.end()) {
      at->second = v;
      return false;
    }
    m.emplace_back(f, v);
    return true;
  }
  static bool IsInt(const std::string& v) {
    if (v.empty()) return false;
    size_t i = v[0] == '-' ? 1 : 0;
    if (i == v.size()) return false;
    for (; i < v.size(); ++i) {
      if (v[i] < '0' || v[i] > '9') return false;
    }
    return v == "0" || (v[0] != '0' && v.rfind("-0", 0) != 0);
  }
  int Pick(int n) { return static_cast<int>(rng_() % static_cast<uint32_t>(n)); }
  std::string Key() { return "h" + std::to_string(Pick(3)); }
  std::string Field() { return "f" + std::to_string(Pick(12)); }
  // Integers (for HINCRBY), short words, and now and then one past Redis's 64-byte listpack
  // value limit (which moves the hash out in every layout).
  std::string Value() {
    switch (Pick(8)) {
      case 0:
        return std::string(static_cast<size_t>(65 + Pick(3)), 'x');
      case 1:
      case 2:
      case 3:
        return std::to_string(Pick(100) - 50);
      default:
        return std::string(static_cast<size_t>(Pick(4) * 6), "abcd"[Pick(4)]);
    }
  }

  Store* store_;
  std::mt19937 rng_;
  std::map<std::string, Fields> model_;
};

void RunModel(int64_t max_fields, size_t max_bytes, uint32_t seed) {
  TempDir dir;
  auto store = OpenWithLimits(dir.path(), max_fields, max_bytes);
  RandomRun run(store.get(), seed);
  for (int round = 0; round < 4; ++round) {
    for (int i = 0; i < 500; ++i) {
      run.Step();
      if (i % 50 == 0) run.CheckAll();
    }
    store.reset();  // every layout reads back after a reopen
    store = OpenWithLimits(dir.path(), max_fields, max_bytes);
    run.set_store(store.get());
    run.CheckAll();
  }
}

}  // namespace

TEST_CASE("hash layouts: random operations match Redis's semantics in every layout") {
  SUBCASE("always one entry per field") { RunModel(0, 0, 7); }
  SUBCASE("limits so small that hashes move out after a few fields") { RunModel(4, 48, 11); }
  SUBCASE("the default limits") {
    Options defaults;
    RunModel(defaults.hash_inline_max_fields, defaults.hash_inline_max_bytes, 13);
  }
}

TEST_CASE("hash layouts: a small hash is one entry; it moves out past a limit and stays out") {
  TempDir dir;
  {
    auto store = OpenWithLimits(dir.path(), 8, 1024);
    SetN(*store, "h", 0, 8, "v");
    SetN(*store, "wide", 0, 3, "v");
    SetN(*store, "long", 0, 2, "v");
  }
  Stored s = ReadStored(dir.path(), "h");
  CHECK(s.is_inline);
  CHECK(s.count == 8);
  CHECK(s.field_entries == 0);
  {
    auto store = OpenWithLimits(dir.path(), 8, 1024);
    SetN(*store, "h", 8, 9, "v");                      // past the field limit
    SetN(*store, "wide", 3, 4, std::string(64, 'w'));  // 64 bytes: still a listpack value
    SetN(*store, "long", 2, 3, std::string(65, 'l'));  // past Redis's 64-byte value limit
    CHECK(All(*store, "h").size() == 9);
    CHECK(All(*store, "h").back() == std::make_pair(std::string("f8"), std::string("v")));
  }
  s = ReadStored(dir.path(), "h");
  CHECK_FALSE(s.is_inline);
  CHECK_FALSE(s.big_encoding);  // Redis's listpack still (128 fields); Sluice's limit was 8
  CHECK(s.field_entries == 9);
  s = ReadStored(dir.path(), "wide");
  CHECK(s.is_inline);
  CHECK(s.field_entries == 0);
  s = ReadStored(dir.path(), "long");
  CHECK_FALSE(s.is_inline);
  CHECK(s.big_encoding);
  CHECK(s.field_entries == 3);
  {
    auto store = OpenWithLimits(dir.path(), 8, 1024);
    {
      Txn t(*store, {});
      const SV drop[] = {"f0", "f1", "f2", "f3", "f4", "f5", "f6"};
      CHECK(*t.HDel(0, "h", drop) == 7);
      REQUIRE(t.Commit().ok());
    }
    CHECK(All(*store, "h") == Fields{{"f7", "v"}, {"f8", "v"}});
  }
  s = ReadStored(dir.path(), "h");
  CHECK_FALSE(s.is_inline);  // never back, as Redis never turns a hashtable into a listpack
  CHECK(s.field_entries == 2);
}

TEST_CASE("hash layouts: the byte limit counts fields and values with their lengths") {
  TempDir dir;
  {
    auto store = OpenWithLimits(dir.path(), 128, 40);
    SetN(*store, "h", 0, 4, "abcdef");  // 4 x (1 + 2 + 1 + 6) = 40 bytes: fits
  }
  CHECK(ReadStored(dir.path(), "h").is_inline);
  {
    auto store = OpenWithLimits(dir.path(), 128, 40);
    {
      Txn t(*store, {});
      const std::pair<SV, SV> one[] = {{"f0", "abcdefg"}};  // 41 bytes
      CHECK(*t.HSet(0, "h", one) == 0);
      REQUIRE(t.Commit().ok());
    }
    CHECK(All(*store, "h") ==
          Fields{{"f0", "abcdefg"}, {"f1", "abcdef"}, {"f2", "abcdef"}, {"f3", "abcdef"}});
  }
  Stored s = ReadStored(dir.path(), "h");
  CHECK_FALSE(s.is_inline);
  CHECK(s.field_entries == 4);
}

// Sets on an inline hash edit its bytes in place (nothing decoded): values that grow and shrink
// (up to Redis's 64-byte listpack value, past which the hash moves out), a field set twice in
// one call, new fields after the others, each read back in order with the count the metadata
// keeps.
TEST_CASE("hash layouts: sets edit an inline hash's bytes in place") {
  TempDir dir;
  auto store = OpenWithLimits(dir.path(), 128, 4096);
  const auto set = [&](std::initializer_list<std::pair<SV, SV>> fields, int64_t added) {
    Txn t(*store, {});
    const std::vector<std::pair<SV, SV>> v(fields);
    CHECK(*t.HSet(0, "h", v) == added);
    REQUIRE(t.Commit().ok());
  };
  const std::string wide(64, 'x');
  set({{"f0", "a"}, {"f1", "b"}}, 2);
  set({{"f0", wide}}, 0);
  CHECK(All(*store, "h") == Fields{{"f0", wide}, {"f1", "b"}});
  set({{"f2", "1"}, {"f2", "2"}, {"f1", std::string(63, 'y')}}, 1);
  set({{"f0", "c"}}, 0);
  CHECK(All(*store, "h") == Fields{{"f0", "c"}, {"f1", std::string(63, 'y')}, {"f2", "2"}});
  {
    Txn t(*store, {});
    CHECK(*t.HIncrBy(0, "h", "f2", 40) == 42);
    CHECK(*t.HIncrBy(0, "h", "f3", -1) == -1);
    REQUIRE(t.Commit().ok());
  }
  CHECK(All(*store, "h") ==
        Fields{{"f0", "c"}, {"f1", std::string(63, 'y')}, {"f2", "42"}, {"f3", "-1"}});
  store.reset();
  const Stored s = ReadStored(dir.path(), "h");
  CHECK(s.is_inline);
  CHECK(s.count == 4);
  CHECK(s.field_entries == 0);
}

TEST_CASE("hash layouts: a hash stored one entry per field stays so under inline limits") {
  TempDir dir;
  {
    auto store = OpenWithLimits(dir.path(), 0, 0);  // as a build before inline hashes stored it
    SetN(*store, "h", 0, 3, "v");
  }
  Stored s = ReadStored(dir.path(), "h");
  CHECK_FALSE(s.is_inline);
  CHECK(s.field_entries == 3);
  {
    auto store = OpenWithLimits(dir.path(), 128, 1024);
    SetN(*store, "h", 3, 4, "w");
    CHECK(All(*store, "h") == Fields{{"f0", "v"}, {"f1", "v"}, {"f2", "v"}, {"f3", "w"}});
    Txn t(*store, {});
    auto pick = t.HRandField(0, "h", 1);
    REQUIRE(pick.ok());
    CHECK(pick->size() == 1);
  }
  s = ReadStored(dir.path(), "h");
  CHECK_FALSE(s.is_inline);
  CHECK(s.field_entries == 4);
}

TEST_CASE("hash layouts: RENAME, COPY, MOVE and DEL of an inline hash") {
  TempDir dir;
  auto store = OpenWithLimits(dir.path(), 128, 1024);
  SetN(*store, "h", 0, 3, "v");
  const Fields want = {{"f0", "v"}, {"f1", "v"}, {"f2", "v"}};
  {
    Txn t(*store, {});
    REQUIRE(*t.Copy(0, "h", 0, "c", false));
    REQUIRE(*t.Rename(0, "h", "r", false));
    REQUIRE(*t.Move(0, 1, "c"));
    REQUIRE(t.Commit().ok());
  }
  CHECK(All(*store, "r") == want);
  CHECK(All(*store, "h").empty());
  {
    Txn t(*store, {});
    CHECK(*t.HGetAll(1, "c") == want);
    const SV key[] = {"r"};
    CHECK(*t.Del(0, key) == 1);
    REQUIRE(t.Commit().ok());
  }
  CHECK(All(*store, "r").empty());
  store.reset();
  CHECK_FALSE(ReadStored(dir.path(), "r").exists);
}

}  // namespace sluice::testing
