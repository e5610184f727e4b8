// The two list layouts (storage/types/list_body.h): a seeded random run of every list operation
// against a model of Redis's semantics, with limits that keep lists always big, that make them
// change layout every few calls, and the defaults; and checks of the layout itself in the stored
// bytes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "storage/types/collection.h"
#include "storage/types/list_body.h"
#include "test_util.h"

namespace sluice::testing {

namespace {
using SV = std::string_view;
using Txn = Store::Transaction;
using End = Store::Transaction::ListEnd;
using Els = std::vector<std::string>;
using Model = std::deque<std::string>;

std::unique_ptr<Store> OpenWithLimits(const std::string& path, int64_t max_entries,
                                      size_t max_bytes) {
  return OpenStoreWith(path, [&](Options& o) {
    o.list_inline_max_entries = max_entries;
    o.list_inline_max_bytes = max_bytes;
  });
}

// How a list is stored, read from the closed store's bytes: whether its metadata holds it
// inline, and how many element entries its version has in the list column family.
struct Stored {
  bool exists = false;
  bool is_inline = false;
  int64_t count = 0;
  int64_t element_entries = 0;
};

Stored ReadStored(const std::string& path, SV key) {
  StoredCollection c = ReadStoredCollection(path, key, {"list"});
  return Stored{c.exists, c.has(internal::kMetaInline), c.count, c.entries["list"]};
}

Els All(Store& s, SV key) {
  Txn t(s, {});
  return *t.LRange(0, key, 0, -1);
}

void PushN(Store& s, SV key, int n, const std::string& element) {
  Txn t(s, {});
  for (int i = 0; i < n; ++i) {
    const SV one[] = {element};
    REQUIRE(t.ListPush(0, key, End::kRight, one, false).ok());
  }
  REQUIRE(t.Commit().ok());
}

// ---- The model: Redis 7.0's list semantics on a deque per key.

int64_t Normalize(int64_t i, int64_t len) { return i < 0 ? len + i : i; }

bool Clamp(int64_t len, int64_t* start, int64_t* stop) {
  if (*start < 0) *start = std::max<int64_t>(0, len + *start);
  if (*stop < 0) *stop = len + *stop;
  if (*start > *stop || *start >= len) return false;
  if (*stop >= len) *stop = len - 1;
  return true;
}

class RandomRun {
 public:
  RandomRun(Store* store, uint32_t seed) : store_(store), rng_(seed) {}

  // One random operation on the store and the model; CHECKs that both answer alike.
  void Step() {
    const std::string key = Key();
    Model& m = model_[key];
    const auto len = static_cast<int64_t>(m.size());
    Txn t(*store_, {});
    switch (Pick(11)) {
      case 0:
      case 1: {  // LPUSH / RPUSH of 1-5 elements
        const End end = Pick(2) == 0 ? End::kLeft : End::kRight;
        Els els;
        for (int n = Pick(5) + 1; n > 0; --n) els.push_back(Element());
        std::vector<SV> views(els.begin(), els.end());
        for (const std::string& e : els) {
          if (end == End::kLeft) {
            m.push_front(e);
          } else {
            m.push_back(e);
          }
        }
        CHECK(*t.ListPush(0, key, end, views, false) == static_cast<int64_t>(m.size()));
        break;
      }
      case 2: {  // LPOP / RPOP with a count
        const End end = Pick(2) == 0 ? End::kLeft : End::kRight;
        const int64_t count = Pick(4);
        auto r = t.ListPop(0, key, end, count);
        REQUIRE(r.ok());
        if (m.empty()) {
          CHECK_FALSE(r->has_value());
          break;
        }
        Els want;
        for (int64_t i = 0; i < count && !m.empty(); ++i) {
          want.push_back(end == End::kLeft ? m.front() : m.back());
          if (end == End::kLeft) {
            m.pop_front();
          } else {
            m.pop_back();
          }
        }
        CHECK(**r == want);
        break;
      }
      case 3: {  // LINDEX
        const int64_t i = Index(len);
        const int64_t at = Normalize(i, len);
        auto r = t.LIndex(0, key, i);
        REQUIRE(r.ok());
        if (at < 0 || at >= len) {
          CHECK_FALSE(r->has_value());
        } else {
          CHECK(**r == m[static_cast<size_t>(at)]);
        }
        break;
      }
      case 4: {  // LSET
        const int64_t i = Index(len);
        const int64_t at = Normalize(i, len);
        const std::string e = Element();
        Status s = t.LSet(0, key, i, e);
        if (len == 0) {
          CHECK(s.code() == Code::kNoSuchKey);
        } else if (at < 0 || at >= len) {
          CHECK(s.code() == Code::kInvalidArgument);
        } else {
          CHECK(s.ok());
          m[static_cast<size_t>(at)] = e;
        }
        break;
      }
      case 5: {  // LRANGE
        int64_t start = Index(len), stop = Index(len);
        Els want;
        const int64_t a = start, b = stop;
        if (Clamp(len, &start, &stop)) want.assign(m.begin() + start, m.begin() + stop + 1);
        CHECK(*t.LRange(0, key, a, b) == want);
        break;
      }
      case 6: {  // LTRIM
        int64_t start = Index(len), stop = Index(len);
        REQUIRE(t.LTrim(0, key, start, stop).ok());
        if (Clamp(len, &start, &stop)) {
          m = Model(m.begin() + start, m.begin() + stop + 1);
        } else {
          m.clear();
        }
        break;
      }
      case 7: {  // LREM
        const int64_t count = Pick(5) - 2;
        const std::string e = Element();
        int64_t removed = 0;
        const auto limit = static_cast<int64_t>(count == 0 ? m.size() : std::abs(count));
        if (count >= 0) {
          for (auto it = m.begin(); it != m.end() && removed < limit;) {
            if (*it == e) {
              it = m.erase(it);
              ++removed;
            } else {
              ++it;
            }
          }
        } else {
          for (int64_t i = len - 1; i >= 0 && removed < limit; --i) {
            if (m[static_cast<size_t>(i)] == e) {
              m.erase(m.begin() + i);
              ++removed;
            }
          }
        }
        CHECK(*t.LRem(0, key, count, e) == removed);
        break;
      }
      case 8: {  // LINSERT
        const bool after = Pick(2) == 0;
        const std::string pivot = Element(), e = Element();
        int64_t want = 0;
        if (len > 0) {
          auto it = std::find(m.begin(), m.end(), pivot);
          if (it == m.end()) {
            want = -1;
          } else {
            m.insert(after ? it + 1 : it, e);
            want = static_cast<int64_t>(m.size());
          }
        }
        CHECK(*t.LInsert(0, key, after, pivot, e) == want);
        break;
      }
      case 9: {  // LPOS with RANK, COUNT, MAXLEN
        const std::string e = Element();
        const int64_t rank = Pick(2) == 0 ? Pick(3) + 1 : -(Pick(3) + 1);
        const int64_t count = Pick(3), maxlen = Pick(4);
        std::vector<int64_t> want;
        int64_t matches = 0;
        for (int64_t n = 0; n < len && (maxlen == 0 || n < maxlen); ++n) {
          const int64_t i = rank > 0 ? n : len - 1 - n;
          if (m[static_cast<size_t>(i)] == e && ++matches >= std::abs(rank)) {
            want.push_back(i);
            if (count != 0 && static_cast<int64_t>(want.size()) >= count) break;
          }
        }
        CHECK(*t.LPos(0, key, e, rank, count, maxlen) == want);
        break;
      }
      case 10: {  // LMOVE to another key or the same one
        const std::string dst = Key();
        const End from = Pick(2) == 0 ? End::kLeft : End::kRight;
        const End to = Pick(2) == 0 ? End::kLeft : End::kRight;
        auto r = t.LMove(0, key, dst, from, to);
        REQUIRE(r.ok());
        if (m.empty()) {
          CHECK_FALSE(r->has_value());
          break;
        }
        std::string v = from == End::kLeft ? m.front() : m.back();
        if (from == End::kLeft) {
          m.pop_front();
        } else {
          m.pop_back();
        }
        Model& d = model_[dst];
        if (to == End::kLeft) {
          d.push_front(v);
        } else {
          d.push_back(v);
        }
        CHECK(**r == v);
        break;
      }
    }
    REQUIRE(t.Commit().ok());
  }

  // Every key's elements and length as the model has them.
  void CheckAll() {
    Txn t(*store_, {});
    for (const auto& [key, m] : model_) {
      CHECK(*t.LRange(0, key, 0, -1) == Els(m.begin(), m.end()));
      CHECK(*t.LLen(0, key) == static_cast<int64_t>(m.size()));
    }
  }

  void set_store(Store* store) { store_ = store; }

 private:
  int Pick(int n) { return static_cast<int>(rng_() % static_cast<uint32_t>(n)); }
  std::string Key() { return "l" + std::to_string(Pick(3)); }
  // Few distinct values (so LREM, LINSERT and LPOS find them) of lengths 0-24.
  std::string Element() { return std::string(static_cast<size_t>(Pick(4) * 8), "abcd"[Pick(4)]); }
  int64_t Index(int64_t len) { return Pick(static_cast<int>(2 * len + 5)) - len - 2; }

  Store* store_;
  std::mt19937 rng_;
  std::map<std::string, Model> model_;
};

void RunModel(int64_t max_entries, size_t max_bytes, uint32_t seed) {
  TempDir dir;
  auto store = OpenWithLimits(dir.path(), max_entries, max_bytes);
  RandomRun run(store.get(), seed);
  for (int round = 0; round < 4; ++round) {
    for (int i = 0; i < 600; ++i) {
      run.Step();
      if (i % 50 == 0) run.CheckAll();
    }
    store.reset();  // every layout reads back after a reopen
    store = OpenWithLimits(dir.path(), max_entries, max_bytes);
    run.set_store(store.get());
    run.CheckAll();
  }
}

}  // namespace

TEST_CASE("list layouts: random operations match Redis's semantics in every layout") {
  SUBCASE("always one entry per element") { RunModel(0, 0, 7); }
  SUBCASE("limits so small that lists change layout every few calls") { RunModel(6, 40, 11); }
  SUBCASE("the default limits") {
    Options defaults;
    RunModel(defaults.list_inline_max_entries, defaults.list_inline_max_bytes, 13);
  }
}

TEST_CASE(
    "list layouts: a small list is one entry; it moves out when it grows and back in "
    "when it shrinks to half the limits") {
  TempDir dir;
  auto store = OpenWithLimits(dir.path(), 8, 1024);
  PushN(*store, "l", 8, "x");
  store.reset();
  Stored s = ReadStored(dir.path(), "l");
  CHECK(s.is_inline);
  CHECK(s.count == 8);
  CHECK(s.element_entries == 0);

  store = OpenWithLimits(dir.path(), 8, 1024);
  PushN(*store, "l", 1, "y");  // 9 > 8: one entry per element
  store.reset();
  s = ReadStored(dir.path(), "l");
  CHECK_FALSE(s.is_inline);
  CHECK(s.count == 9);
  CHECK(s.element_entries == 9);

  store = OpenWithLimits(dir.path(), 8, 1024);
  {
    Txn t(*store, {});
    REQUIRE(t.LTrim(0, "l", 0, 4).ok());  // 5 > 8 / 2: stays big
    REQUIRE(t.Commit().ok());
  }
  store.reset();
  s = ReadStored(dir.path(), "l");
  CHECK_FALSE(s.is_inline);
  CHECK(s.element_entries == 5);

  store = OpenWithLimits(dir.path(), 8, 1024);
  {
    Txn t(*store, {});
    REQUIRE(**t.ListPop(0, "l", End::kLeft, 1) == Els{"x"});  // 4: back inline
    REQUIRE(t.Commit().ok());
  }
  CHECK(All(*store, "l") == Els{"x", "x", "x", "x"});
  store.reset();
  s = ReadStored(dir.path(), "l");
  CHECK(s.is_inline);
  CHECK(s.count == 4);
  CHECK(s.element_entries == 0);  // a fresh version: the big layout's entries are not its own

  // Growing again writes the elements under the inline version, not the old one's.
  store = OpenWithLimits(dir.path(), 8, 1024);
  PushN(*store, "l", 6, "z");
  CHECK(All(*store, "l") == Els{"x", "x", "x", "x", "z", "z", "z", "z", "z", "z"});
  store.reset();
  s = ReadStored(dir.path(), "l");
  CHECK_FALSE(s.is_inline);
  CHECK(s.element_entries == 10);
}

TEST_CASE("list layouts: the byte limit moves a list of long elements out; LSET can too") {
  TempDir dir;
  auto store = OpenWithLimits(dir.path(), 128, 64);
  PushN(*store, "l", 3, std::string(20, 'a'));  // 3 x 21 bytes = 63: inline
  store.reset();
  CHECK(ReadStored(dir.path(), "l").is_inline);

  store = OpenWithLimits(dir.path(), 128, 64);
  {
    Txn t(*store, {});
    REQUIRE(t.LSet(0, "l", 1, std::string(21, 'b')).ok());  // 64 bytes: still inline
    REQUIRE(t.Commit().ok());
  }
  store.reset();
  CHECK(ReadStored(dir.path(), "l").is_inline);

  store = OpenWithLimits(dir.path(), 128, 64);
  {
    Txn t(*store, {});
    REQUIRE(t.LSet(0, "l", 2, std::string(21, 'c')).ok());  // 65 bytes: out
    REQUIRE(t.Commit().ok());
  }
  CHECK(All(*store, "l") == Els{std::string(20, 'a'), std::string(21, 'b'), std::string(21, 'c')});
  store.reset();
  const Stored s = ReadStored(dir.path(), "l");
  CHECK_FALSE(s.is_inline);
  CHECK(s.element_entries == 3);
}

TEST_CASE("list layouts: RENAME, COPY and expiry carry an inline list whole") {
  Fixture f;
  {
    Txn t(*f.store, {});
    const SV els[] = {"a", "b", "c"};
    REQUIRE(t.ListPush(0, "src", End::kRight, els, false).ok());
    REQUIRE(t.Commit().ok());
  }
  {
    Txn t(*f.store, {});
    REQUIRE(*t.Copy(0, "src", 0, "copy", false));
    REQUIRE(*t.Rename(0, "src", "moved", false));
    REQUIRE(t.Commit().ok());
  }
  CHECK(All(*f.store, "copy") == Els{"a", "b", "c"});
  CHECK(All(*f.store, "moved") == Els{"a", "b", "c"});
  CHECK(All(*f.store, "src").empty());
  {
    Txn t(*f.store, {});
    REQUIRE(*t.ExpireAt(0, "moved", kT0Ms + 1000, ExpireCondition::kAlways));
    REQUIRE(t.Commit().ok());
  }
  f.AdvanceMs(1001);
  CHECK(All(*f.store, "moved").empty());
  CHECK(All(*f.store, "copy") == Els{"a", "b", "c"});
}

}  // namespace sluice::testing
