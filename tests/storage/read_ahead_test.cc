// Read-ahead of a run of records (storage/engine/read_ahead.h): the window alone over a RocksDB
// database (what it covers, in both directions, within its prefix and its bounds), and a list's
// pops through it after its elements were flushed into table files: the pops of a unit read a
// run with one iterator, see the unit's own writes first, and a later unit sees what others
// wrote in between.
#include "storage/engine/read_ahead.h"

#include <doctest/doctest.h>
#include <rocksdb/db.h>

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "test_util.h"

namespace sluice::testing {
namespace {

using internal::ReadAhead;
using End = Store::Transaction::ListEnd;

// "p1:a".."p1:z" without "p1:e", and "p2:a".."p2:c", each valued "v" + key, in family cfs[0].
void FillKeys(TwoFamilyDb& d) {
  for (char c = 'a'; c <= 'z'; ++c) {
    if (c == 'e') continue;
    const std::string k = std::string("p1:") + c;
    REQUIRE(d.db->Put(rocksdb::WriteOptions(), d.cfs[0], k, "v" + k).ok());
  }
  for (char c = 'a'; c <= 'c'; ++c) {
    const std::string k = std::string("p2:") + c;
    REQUIRE(d.db->Put(rocksdb::WriteOptions(), d.cfs[0], k, "v" + k).ok());
  }
}

void FillAt(TwoFamilyDb& d, ReadAhead& r, const std::string& at, bool descending) {
  std::unique_ptr<rocksdb::Iterator> it(d.db->NewIterator(rocksdb::ReadOptions(), d.cfs[0]));
  if (descending) {
    it->SeekForPrev(at);
  } else {
    it->Seek(at);
  }
  r.Fill(d.cfs[0]->GetID(), "p1:", descending, it.get());
}

// What Serve says of key: "-" not covered, "absent" covered without a record, else the value.
std::string Served(ReadAhead& r, uint32_t cf_id, const std::string& key) {
  std::string value = "stale";
  bool found = true;
  if (!r.Serve(cf_id, key, &value, &found)) return "-";
  return found ? value : "absent";
}

// FillKeys's database and an empty window.
struct KeysDb {
  KeysDb() { FillKeys(d); }
  TempDir dir;
  TwoFamilyDb d{dir.sub("db")};
  ReadAhead r;
};

}  // namespace

TEST_CASE("ReadAhead covers from its first key to its last, within its prefix and family") {
  KeysDb k;
  TwoFamilyDb& d = k.d;
  ReadAhead& r = k.r;
  const uint32_t cf = d.cfs[0]->GetID();
  CHECK(Served(r, cf, "p1:c") == "-");  // empty
  FillAt(d, r, "p1:c", false);
  CHECK(r.size() == 23);  // c..z without e: the run stops at the prefix's end
  CHECK(Served(r, cf, "p1:d") == "vp1:d");
  CHECK(Served(r, cf, "p1:e") == "absent");  // inside the run, nothing stored
  CHECK(Served(r, cf, "p1:c") == "vp1:c");   // back to the first
  CHECK(Served(r, cf, "p1:z") == "vp1:z");
  CHECK(Served(r, cf, "p1:b") == "-");  // before the first key read
  CHECK(Served(r, cf, "p1:zz") == "-");
  CHECK(Served(r, cf, "p2:a") == "-");
  CHECK(Served(r, d.cfs[1]->GetID(), "p1:d") == "-");
  r.Clear();
  CHECK(Served(r, cf, "p1:d") == "-");
}

TEST_CASE("ReadAhead reads downward, and stops at kMaxEntries or past kMaxBytes") {
  KeysDb k;
  TwoFamilyDb& d = k.d;
  ReadAhead& r = k.r;
  const uint32_t cf = d.cfs[0]->GetID();
  FillAt(d, r, "p1:g", true);
  CHECK(r.size() == 6);  // g, f, d, c, b, a
  CHECK(Served(r, cf, "p1:f") == "vp1:f");
  CHECK(Served(r, cf, "p1:e") == "absent");
  CHECK(Served(r, cf, "p1:a") == "vp1:a");
  CHECK(Served(r, cf, "p1:h") == "-");

  for (int i = 0; i < 100; ++i) {
    char k[16];
    std::snprintf(k, sizeof k, "p1:n%03d", i);
    REQUIRE(
        d.db->Put(rocksdb::WriteOptions(), d.cfs[0], k, std::string(i < 50 ? 1 : 10000, 'x')).ok());
  }
  FillAt(d, r, "p1:n000", false);
  CHECK(r.size() == ReadAhead::kMaxEntries);
  CHECK(Served(r, cf, "p1:n031") == "x");
  CHECK(Served(r, cf, "p1:n032") == "-");
  FillAt(d, r, "p1:n050", false);  // 10 KB values: the seventh crosses 64 KB
  CHECK(r.size() == 7);
}

namespace {

// A store holding list "l" of n elements "e0".."e<n-1>", flushed into table files, and its
// model; the unit's key set for the list.
struct FlushedList {
  explicit FlushedList(int n) {
    Store::Transaction t(*s, {});
    for (int i = 0; i < n; ++i) {
      const std::string e = "e" + std::to_string(i);
      const std::string_view one[] = {e};
      REQUIRE(t.ListPush(0, "l", End::kRight, one, false).ok());
      model.push_back(e);
    }
    REQUIRE(t.Commit().ok());
    REQUIRE(s->Checkpoint(dir.sub("cp")).ok());  // flushes: the elements are in table files
  }
  TempDir dir;
  std::unique_ptr<Store> s = OpenStore(dir.sub("s"));
  std::deque<std::string> model;
  const KeyRef keys[1] = {{0, "l"}};
};

std::string PopOne(Store::Transaction& t, End end) {
  auto r = t.ListPop(0, "l", end, 1);
  REQUIRE(r.ok());
  REQUIRE(r->has_value());
  REQUIRE((*r)->size() == 1);
  return (**r)[0];
}

// Pops n elements one call each from `end`, each the model's.
void PopChecked(Store::Transaction& t, End end, int n, std::deque<std::string>* model) {
  for (int i = 0; i < n; ++i) {
    const bool left = end == End::kLeft;
    CHECK(PopOne(t, end) == (left ? model->front() : model->back()));
    if (left) {
      model->pop_front();
    } else {
      model->pop_back();
    }
  }
}

void CheckStored(Store& s, const std::deque<std::string>& model) {
  Store::Transaction check(s, {});
  CHECK(*check.LRange(0, "l", 0, -1) == std::vector<std::string>(model.begin(), model.end()));
}

}  // namespace

TEST_CASE("A unit's pops from a flushed list read ahead, one iterator per run") {
  FlushedList f(1000);
  {
    Store::Transaction t(*f.s, f.keys);
    PopChecked(t, End::kLeft, 100, &f.model);
    PopChecked(t, End::kRight, 50, &f.model);
    REQUIRE(t.Commit().ok());
  }
  const Store::Stats st = f.s->GetStats();
  // Two point reads start each end's run; a fill serves up to 31 more pops.
  CHECK(st.read_ahead_hits >= 150 - 2 * 2 - 6);
  CHECK(st.read_ahead_fills >= 5);
  CHECK(st.read_ahead_fills <= 8);
  CheckStored(*f.s, f.model);
}

TEST_CASE("A unit that pops once from a flushed list does not read ahead") {
  FlushedList f(300);
  for (int i = 0; i < 3; ++i) {
    Store::Transaction t(*f.s, f.keys);
    CHECK(PopOne(t, End::kLeft) == f.model[i]);
    REQUIRE(t.Commit().ok());
  }
  CHECK(f.s->GetStats().read_ahead_fills == 0);
}

TEST_CASE("Read-ahead pops see the unit's own writes, and a later unit sees others' writes") {
  FlushedList f(500);
  {
    Store::Transaction t(*f.s, f.keys);
    PopChecked(t, End::kLeft, 2, &f.model);  // the second pop fills the run
    REQUIRE(f.s->GetStats().read_ahead_fills == 1);
    REQUIRE(t.LSet(0, "l", 3, "changed").ok());  // a position the run already read
    f.model[3] = "changed";
    const std::string_view pushed[] = {"pushed"};
    REQUIRE(t.ListPush(0, "l", End::kLeft, pushed, false).ok());
    f.model.push_front("pushed");
    auto moved = t.LMove(0, "l", "l", End::kRight, End::kLeft);  // rotates the tail to the head
    REQUIRE(moved.ok());
    CHECK(**moved == f.model.back());
    f.model.push_front(f.model.back());
    f.model.pop_back();
    PopChecked(t, End::kLeft, 8, &f.model);
    REQUIRE(t.Commit().ok());
  }
  {  // another unit changes what the first one's run had read
    Store::Transaction t(*f.s, f.keys);
    REQUIRE(t.LSet(0, "l", 0, "fresh").ok());
    REQUIRE(t.LSet(0, "l", 5, "fresh5").ok());
    REQUIRE(t.Commit().ok());
    f.model[0] = "fresh";
    f.model[5] = "fresh5";
  }
  {
    Store::Transaction t(*f.s, f.keys);
    PopChecked(t, End::kLeft, 10, &f.model);
    REQUIRE(t.Commit().ok());
  }
  CheckStored(*f.s, f.model);
}

}  // namespace sluice::testing
