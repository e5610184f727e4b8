// Element records in the record cache (storage/engine/element_versions.h): a hash field or set
// member read from a table file is served from memory while its bucket's write version is
// unchanged; a write to another element of the same collection leaves it cached, a write to it
// retires it; random element writes, deletes, flushes and reads agree with a model; a counting
// field read under and without its key's lock is never older than an acknowledged write.
#include <doctest/doctest.h>

#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "sluice/transaction.h"
#include "stale_reads.h"
#include "test_util.h"

namespace sluice::testing {
namespace {

int64_t Hits(Store& s) { return s.GetStats().record_cache_hits; }

// As the server runs HGET: the key declared (the unit holds its stripe) or, with locked false,
// a unit that does not hold it.
std::optional<std::string> HGet(Store& s, std::string_view key, std::string_view field,
                                bool locked = true) {
  const KeyRef keys[] = {{0, locked ? key : std::string_view("elsewhere")}};
  Store::Transaction t(s, keys, TransactionOptions{.isolate_reads = false});
  auto r = t.HGet(0, key, field);
  REQUIRE(r.ok());
  return *r;
}

void HSet(Store& s, std::string_view key, std::string_view field, std::string_view value) {
  const KeyRef keys[] = {{0, key}};
  Store::Transaction t(s, keys);
  const std::pair<std::string_view, std::string_view> one[] = {{field, value}};
  REQUIRE(t.HSet(0, key, one).ok());
  REQUIRE(t.Commit().ok());
}

bool SIsMember(Store& s, std::string_view key, std::string_view member) {
  const KeyRef keys[] = {{0, key}};
  Store::Transaction t(s, keys);
  auto r = t.SIsMember(0, key, member);
  REQUIRE(r.ok());
  return *r;
}

// One unit: SADD (add) or SREM of one member; how many changed.
int64_t SChange(Store& s, std::string_view key, std::string_view member, bool add) {
  const KeyRef keys[] = {{0, key}};
  Store::Transaction t(s, keys);
  const std::string_view one[] = {member};
  auto r = add ? t.SAdd(0, key, one) : t.SRem(0, key, one);
  REQUIRE(r.ok());
  REQUIRE(t.Commit().ok());
  return *r;
}

// A hash past every inline limit, its fields in their column family.
void BigHash(Store& s, std::string_view key, int fields) {
  const KeyRef keys[] = {{0, key}};
  Store::Transaction t(s, keys);
  std::vector<std::string> names;
  for (int i = 0; i < fields; ++i) names.push_back("f" + std::to_string(i));
  std::vector<std::pair<std::string_view, std::string_view>> pairs;
  for (const auto& n : names) pairs.emplace_back(n, "v0");
  REQUIRE(t.HSet(0, key, pairs).ok());
  REQUIRE(t.Commit().ok());
}

TEST_CASE("A hash field read from a table file is cached until that field is written") {
  TempDir dir;
  auto s = OpenStore(dir.sub("db"));
  BigHash(*s, "h", 300);
  REQUIRE(s->Checkpoint(dir.sub("copy")).ok());  // fields and metadata in table files
  for (int i = 0; i < 3; ++i) CHECK(HGet(*s, "h", "f7") == std::optional<std::string>("v0"));
  const int64_t warm = Hits(*s);
  CHECK(warm >= 1);
  CHECK(HGet(*s, "h", "f7") == std::optional<std::string>("v0"));
  CHECK(Hits(*s) == warm + 2);  // the metadata and the field
  HSet(*s, "h", "f8", "v1");    // another field (another bucket): f7 stays cached
  CHECK(HGet(*s, "h", "f7") == std::optional<std::string>("v0"));
  const int64_t after_other = Hits(*s);
  // HSET's read of the metadata, then the field (the metadata is in the memtable now).
  CHECK(after_other == warm + 4);
  HSet(*s, "h", "f7", "v2");  // (its read of f7 is served)
  const int64_t after_write = Hits(*s);
  CHECK(after_write == after_other + 1);
  CHECK(HGet(*s, "h", "f7") == std::optional<std::string>("v2"));
  CHECK(HGet(*s, "h", "f7", /*locked=*/false) == std::optional<std::string>("v2"));
  CHECK(Hits(*s) == after_write);  // nothing served for f7 after its write
}

TEST_CASE("Set members agree with a model through random SADD, SREM, flushes and reads") {
  TempDir dir;
  auto s = OpenStore(dir.sub("db"));
  std::set<std::string> model;
  for (int i = 0; i < 600; ++i) {  // past the set's inline limits
    const std::string m = "base" + std::to_string(i);
    CHECK(SChange(*s, "s", m, true) == 1);
    model.insert(m);
  }
  std::mt19937 rng(11);
  int flushes = 0;
  for (int step = 0; step < 5000; ++step) {
    const std::string m = "m" + std::to_string(rng() % 24);
    const unsigned op = rng() % 10;
    if (op < 2) {
      CHECK(SChange(*s, "s", m, true) == (model.insert(m).second ? 1 : 0));
    } else if (op < 3) {
      CHECK(SChange(*s, "s", m, false) == static_cast<int64_t>(model.erase(m)));
    } else if (op < 4 && step % 7 == 0) {
      REQUIRE(s->Checkpoint(dir.sub("c" + std::to_string(flushes++))).ok());
    } else {
      CHECK(SIsMember(*s, "s", m) == (model.count(m) == 1));
    }
  }
  CHECK(flushes > 20);
  CHECK(Hits(*s) > 100);
  const KeyRef keys[] = {{0, "s"}};
  Store::Transaction t(*s, keys);
  auto all = t.SMembers(0, "s");
  REQUIRE(all.ok());
  CHECK(std::set<std::string>(all->begin(), all->end()) == model);
}

// A writer counts up one field of a big hash while the memtables are flushed again and again and
// two readers, one holding the key's lock and one not, read it: neither may see a value older
// than one acknowledged before its read began.
TEST_CASE("A cached field is never older than an acknowledged write") {
  TempDir dir;
  auto s = OpenStore(dir.sub("db"));
  BigHash(*s, "h", 300);
  HSet(*s, "h", "n", "0");
  const int stale = CountStaleReads(
      *s, dir, [&](int i) { HSet(*s, "h", "n", std::to_string(i)); },
      [&](bool locked) { return HGet(*s, "h", "n", locked); });
  CHECK(stale == 0);
  REQUIRE(s->Checkpoint(dir.sub("last")).ok());
  const int64_t before = Hits(*s);
  for (int i = 0; i < 3; ++i) CHECK(HGet(*s, "h", "n") == std::optional<std::string>("3000"));
  CHECK(HGet(*s, "h", "n", false) == std::optional<std::string>("3000"));
  CHECK(Hits(*s) > before);
}

}  // namespace
}  // namespace sluice::testing
