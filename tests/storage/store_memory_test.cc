// What a store holds in memory and on disk, and what it gives back when it goes quiet: GetStats
// counts every column family's memtables and table files; a memtable of few keys stays small;
// the idle flush moves memtables holding deletions (and re-scored members' old scores) into
// table files and lets the write-ahead logs go; a quiet store trims the heap's free pages.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "sluice/transaction.h"
#include "test_util.h"

namespace sluice::testing {
namespace {

TEST_CASE("GetStats reports disk and memtable usage") {
  TempDir dir;
  auto s = OpenStore(dir.path());
  for (int i = 0; i < 100; ++i)
    REQUIRE(s->Set(0, "k" + std::to_string(i), "value", SetPlain()).ok());
  auto st = s->GetStats();
  CHECK(st.disk_bytes > 0);  // the WAL at least
  CHECK(st.memtable_bytes > 0);
}

// A hash's fields live in their own column family, not the default one: both counts must take
// in every family (they once read the default family's alone, so 400 KB of fields showed as a
// few hundred bytes of metadata and their table file as nothing).
TEST_CASE("GetStats counts every column family's memtables and table files") {
  TempDir dir;
  auto s = OpenStore(dir.sub("db"));
  {
    Store::Transaction t(*s, {});
    std::mt19937_64 bytes(44);  // values that do not compress
    for (int i = 0; i < 2000; ++i) {
      std::string value(200, '\0');
      for (char& c : value) c = static_cast<char>(bytes());
      const std::string field = "field:" + std::to_string(i);
      const std::pair<std::string_view, std::string_view> one[] = {{field, value}};
      REQUIRE(t.HSet(0, "h", one).ok());
    }
    REQUIRE(t.Commit().ok());
  }
  const auto before = s->GetStats();
  REQUIRE(s->Checkpoint(dir.sub("copy")).ok());  // flushes the memtables into table files
  const auto after = s->GetStats();
  // Every family's new, empty memtable counts too (its arena's first block), so the check is
  // what the flush gave back, at least the fields' bytes.
  CHECK(before.memtable_bytes - after.memtable_bytes > 400000);
  int64_t table_files = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir.sub("db"))) {
    if (f.path().extension() == ".sst") table_files += static_cast<int64_t>(f.file_size());
  }
  CHECK(table_files > 400000);
  CHECK(after.disk_bytes >= table_files);
}

// The memtable's hash table is sized for a full write buffer (256 MB: 2M buckets, 16 MB of
// heads) and allocates its buckets in segments as keys arrive in random ones. Segments of 4,096
// buckets made a few thousand keys touch all 16 MB; the small ones keep a small memtable small.
TEST_CASE("A memtable of a few thousand keys holds buckets for them, not for a full buffer") {
  TempDir dir;
  auto s = OpenStore(dir.sub("db"));
  const int64_t empty = s->GetStats().memtable_bytes;
  {
    Store::Transaction t(*s, {});
    for (int i = 0; i < 5000; ++i) {
      const std::string field = "field:" + std::to_string(i);
      const std::pair<std::string_view, std::string_view> one[] = {{field, "v"}};
      REQUIRE(t.HSet(0, "h", one).ok());
    }
    REQUIRE(t.Commit().ok());
  }
  const int64_t grown = s->GetStats().memtable_bytes - empty;
  MESSAGE("5,000 fields grew the memtables by " << grown << " bytes");
  CHECK(grown < 5 * 1024 * 1024);
}

std::unique_ptr<Store> OpenWithIdleFlush(const std::string& path) {
  Options o;
  o.path = path;
  o.active_expiry = false;
  o.idle_flush_after_s = 1;
  auto r = Store::Open(o);
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  return std::move(r).value();
}

// Polls the store's memtable size for up to `seconds`; true once it is under `bytes`.
bool MemtableShrinksBelow(Store& s, int64_t bytes, int seconds) {
  for (int i = 0; i < seconds * 10; ++i) {
    if (s.GetStats().memtable_bytes < bytes) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

// 2000 keys of 200 bytes, then a deletion of each: a memtable of deletions over ~400 KB.
void WriteThenDelete(Store& s) {
  for (int i = 0; i < 2000; ++i) {
    REQUIRE(s.Set(0, "k" + std::to_string(i), std::string(200, 'v'), SetPlain()).ok());
  }
  for (int i = 0; i < 2000; ++i) {
    const std::string key = "k" + std::to_string(i);
    const std::string_view keys[] = {key};
    REQUIRE(*s.Del(0, keys) == 1);
  }
}

TEST_CASE("A store that goes quiet flushes a memtable holding deletions, so disk can shrink") {
  TempDir dir;
  auto s = OpenWithIdleFlush(dir.path());
  // Every family's empty memtable counts (its arena's first block): what shrinks is the rest.
  const int64_t empty = s->GetStats().memtable_bytes;
  WriteThenDelete(*s);
  const int64_t full = s->GetStats().memtable_bytes;
  REQUIRE(full - empty > 400000);
  CHECK(MemtableShrinksBelow(*s, empty + (full - empty) / 4, 15));
  CHECK(s->Get(0, "k1")->has_value() == false);
}

// A re-score erases the member's old score element with a SingleDelete, which RocksDB's count
// of a memtable's deletions leaves out: 2,000 of them alone must trigger the idle flush too
// (seen as table files: nothing else writes one here).
TEST_CASE("A store that goes quiet flushes a memtable holding re-scored members' old scores") {
  TempDir dir;
  auto s = OpenWithIdleFlush(dir.path());
  for (int round = 0; round < 2; ++round) {  // 2,000 members, then each re-scored once
    Store::Transaction t(*s, {});
    for (int i = 0; i < 2000; ++i) {
      const std::string member = "member:" + std::to_string(i);
      const std::pair<double, std::string_view> one[] = {{double(i + round * 5000), member}};
      REQUIRE(t.ZAdd(0, "board", {}, one).ok());
    }
    REQUIRE(t.Commit().ok());
  }
  auto table_files = [&] {
    int n = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
      n += e.path().extension() == ".sst" ? 1 : 0;
    }
    return n;
  };
  REQUIRE(table_files() == 0);
  bool flushed = false;
  for (int i = 0; i < 150 && !flushed; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    flushed = table_files() > 0;
  }
  CHECK(flushed);
  Store::Transaction t(*s, {});
  CHECK(*t.ZCard(0, "board") == 2000);
  CHECK(t.ZRangeByRank(0, "board", 0, 0, false)->at(0).second == 5000);
}

std::vector<std::string> LogFiles(const std::string& dir) {
  std::vector<std::string> logs;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".log") logs.push_back(e.path().filename().string());
  }
  return logs;
}

TEST_CASE("A store that goes quiet after deletions gives back its write-ahead logs too") {
  TempDir dir;
  auto s = OpenWithIdleFlush(dir.path());
  WriteThenDelete(*s);
  const std::vector<std::string> before = LogFiles(dir.path());
  REQUIRE_FALSE(before.empty());
  // Every family is flushed (the keyspace counts' too), so no log of the burst is needed.
  bool gone = false;
  for (int i = 0; i < 150 && !gone; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const std::vector<std::string> now = LogFiles(dir.path());
    gone = std::none_of(before.begin(), before.end(), [&](const std::string& log) {
      return std::find(now.begin(), now.end(), log) != now.end();
    });
  }
  CHECK(gone);
  CHECK(*s->DbSize(0) == 0);
}

// Resident bytes of this process (/proc/self/statm), or -1.
int64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = -1;
  statm >> size >> resident;
  return resident < 0 ? -1 : resident * sysconf(_SC_PAGESIZE);
}

TEST_CASE("A quiet store gives the heap's free pages back to the OS, unless told not to") {
  TempDir dir, dir_off;
  Options off;
  off.path = dir_off.path();
  off.active_expiry = false;
  off.idle_flush_after_s = 1;
  off.release_memory_when_idle = false;
  auto s_off = Store::Open(off);  // opened first: quiet for longer than s when s releases
  REQUIRE(s_off.ok());
  auto s = OpenWithIdleFlush(dir.path());  // flush check at 1 s quiet, the release 5 s later
  // 64 MB freed in 8 KB chunks, each held apart from the next by a small live one: glibc's free
  // returns none of it (only the heap's top), so it stays resident until a trim.
  std::vector<char*> freed, kept;
  for (int i = 0; i < 8192; ++i) {
    freed.push_back(static_cast<char*>(std::malloc(8192)));
    std::memset(freed.back(), 1, 8192);
    kept.push_back(static_cast<char*>(std::malloc(32)));
  }
  for (char* p : freed) std::free(p);
  [[maybe_unused]] const int64_t before = ResidentBytes();  // checked where glibc's trim is
  bool released = false;
  for (int i = 0; i < 200 && !released; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    released = s->GetStats().idle_memory_releases >= 1;
  }
  CHECK(released);
  CHECK((*s_off)->GetStats().idle_memory_releases == 0);
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  // Each freed chunk holds at least one whole page; some may have been reused meanwhile.
  CHECK(before - ResidentBytes() >= (int64_t{24} << 20));
#endif
  for (char* p : kept) std::free(p);
}

TEST_CASE("A quiet store keeps a memtable without deletions (nothing to reclaim)") {
  TempDir dir;
  auto s = OpenWithIdleFlush(dir.path());
  const int64_t empty = s->GetStats().memtable_bytes;
  for (int i = 0; i < 2000; ++i) {
    REQUIRE(s->Set(0, "k" + std::to_string(i), std::string(200, 'v'), SetPlain()).ok());
  }
  const int64_t full = s->GetStats().memtable_bytes;
  REQUIRE(full - empty > 400000);
  CHECK_FALSE(MemtableShrinksBelow(*s, empty + (full - empty) / 4, 3));
  CHECK(*s->Get(0, "k1999") == std::string(200, 'v'));
}

}  // namespace
}  // namespace sluice::testing
