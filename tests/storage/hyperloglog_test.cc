// The pure HyperLogLog code (storage/types/hyperloglog.h) against bytes and counts recorded from
// redis-server 7.0.15 for the same adds.
#include "hyperloglog.h"

#include <doctest/doctest.h>

#include <string>

#include "test_util.h"

namespace sluice::testing {
namespace {

// FNV-1a over the bytes: the recorded strings are 2-12 KB, so the test keeps their hashes.
uint64_t Fnv1a(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::string AddRange(int n) {
  std::string h = hll::NewSparse();
  for (int i = 1; i <= n; ++i) {
    const std::string e = "e" + std::to_string(i);
    REQUIRE(hll::Add(&h, e, hll::kDefaultSparseMaxBytes) != hll::Change::kCorrupt);
  }
  hll::InvalidateCachedCount(&h);
  return h;
}

}  // namespace

TEST_CASE("HLL: a new sparse HLL and three adds are Redis's bytes") {
  std::string h = hll::NewSparse();
  CHECK(h == std::string("HYLL\x01\0\0\0\0\0\0\0\0\0\0\0\x7f\xff", 18));
  CHECK(hll::LooksValid(h));
  CHECK(hll::Count(h) == 0);
  for (const char* e : {"a", "b", "c"}) {
    CHECK(hll::Add(&h, e, hll::kDefaultSparseMaxBytes) == hll::Change::kChanged);
  }
  CHECK(hll::Add(&h, "a", hll::kDefaultSparseMaxBytes) == hll::Change::kUnchanged);
  hll::InvalidateCachedCount(&h);
  const std::string redis(
      "HYLL\x01\0\0\0\0\0\0\0\0\0\0\x80`\xf3\x80P\xb1\x84K\xfb\x80"
      "BZ",
      27);
  CHECK(h == redis);
  CHECK(hll::Count(h) == 3);
}

TEST_CASE("HLL: sparse, promoted and dense strings match Redis's, with its counts") {
  struct Case {
    int n;
    size_t size;
    uint64_t hash;
    uint64_t count;
    uint64_t hash_with_count;
  };
  for (const Case& c : {Case{1000, 1906, 0x1ae9f4f35eb4b4a0ULL, 1008, 0x8b59617dea27b6b9ULL},
                        Case{5000, 12304, 0x0fd951525dc1f5aaULL, 4968, 0x41d76289337963a7ULL},
                        Case{20000, 12304, 0xb2d128bbead377c0ULL, 19899, 0x7026b2cb88978990ULL}}) {
    CAPTURE(c.n);
    std::string h = AddRange(c.n);
    CHECK(h.size() == c.size);
    CHECK(Fnv1a(h) == c.hash);
    CHECK(hll::IsDense(h) == (c.size == hll::kDenseSize));
    CHECK_FALSE(hll::CachedCount(h).has_value());
    REQUIRE(hll::Count(h).has_value());
    CHECK(*hll::Count(h) == c.count);
    hll::StoreCachedCount(&h, *hll::Count(h));
    CHECK(hll::CachedCount(h) == c.count);
    CHECK(Fnv1a(h) == c.hash_with_count);
  }
}

TEST_CASE("HLL: merging registers and converting to dense keep the count") {
  std::string sparse = AddRange(1000);
  hll::Registers max{};
  REQUIRE(hll::MergeInto(sparse, &max));
  CHECK(hll::Count(max) == 1008);
  std::string dense = sparse;
  REQUIRE(hll::ToDense(&dense));
  CHECK(dense.size() == hll::kDenseSize);
  CHECK(hll::Count(dense) == 1008);
  hll::Registers again{};
  REQUIRE(hll::MergeInto(dense, &again));
  CHECK(again == max);
}

TEST_CASE("HLL: invalid and corrupt strings are refused") {
  CHECK_FALSE(hll::LooksValid("HYLL"));
  CHECK_FALSE(hll::LooksValid(std::string("HYLX\x01", 5) + std::string(11, '\0')));
  std::string bad_encoding = hll::NewSparse();
  bad_encoding[4] = 2;
  CHECK_FALSE(hll::LooksValid(bad_encoding));
  std::string short_dense = hll::NewSparse();
  short_dense[4] = 0;
  CHECK_FALSE(hll::LooksValid(short_dense));  // a dense string must be exactly 12304 bytes
  // Sparse opcodes that cover too few registers.
  std::string truncated = hll::NewSparse();
  truncated.resize(truncated.size() - 1);
  truncated.back() = 0x00;  // ZERO of 1 register
  CHECK(hll::LooksValid(truncated));
  CHECK_FALSE(hll::Count(truncated).has_value());
  hll::Registers max{};
  CHECK_FALSE(hll::MergeInto(truncated, &max));
  CHECK(hll::Add(&truncated, "x", hll::kDefaultSparseMaxBytes) == hll::Change::kCorrupt);
}

TEST_CASE("HLL: MurmurHash64A over whole words, tails and the empty string") {
  // Values from an independent transcription of the published algorithm (seed 0xadc83b19, as
  // Redis hashes elements); the byte-for-byte tests above pin it to Redis itself.
  constexpr uint64_t kSeed = 0xadc83b19ULL;
  CHECK(hll::MurmurHash64A("", kSeed) == 0xd8dfea6585bc9732ULL);
  CHECK(hll::MurmurHash64A("abc", kSeed) == 0x77ec90aeb374e502ULL);
  CHECK(hll::MurmurHash64A("hello world!", kSeed) == 0x0fc444011f57220cULL);
  CHECK(hll::MurmurHash64A(std::string(20, 'a'), kSeed) == 0xf796111286c2df40ULL);
}

TEST_CASE("HLL store ops: hll_sparse_max_bytes decides when a sparse HLL turns dense") {
  Fixture f;
  const KeyRef keys[] = {{0, "h"}};
  const std::string_view elements[] = {"a", "b", "c", "d", "e", "f", "g", "h"};
  auto encoding_after_adds = [&](int64_t max) {
    f.store->set_hll_sparse_max_bytes(max);
    Store::Transaction txn(*f.store, keys);
    const std::string_view key[] = {"h"};
    REQUIRE(txn.Del(0, key).ok());
    REQUIRE(txn.PfAdd(0, "h", elements).ok());
    auto value = txn.Get(0, "h");
    REQUIRE(value.ok());
    REQUIRE(value->has_value());
    return hll::IsDense(**value);
  };
  CHECK_FALSE(encoding_after_adds(3000));
  CHECK(encoding_after_adds(20));  // 8 registers need more than 20 bytes of opcodes
}

}  // namespace sluice::testing
