// ElementVersions: write versions for the records of the element column families (hash fields,
// set and sorted-set members, list positions, stream nodes), the counterpart of the lock
// stripes' write versions (lock_pool.h) for the record cache (record_cache.h).
//
// A collection's elements all share its key's lock stripe, so a stripe's version moves with
// every write to the collection: a hot set taking new members would retire every member the
// cache holds at each one. Element records get versions of their own instead, one per bucket of
// hash(column family, element key): a write retires only the records that share its bucket.
//
// Contract (as for the stripes): a unit's commit makes the version of every bucket it writes an
// element in odd before its RocksDB write and even after it (Txn::Commit, from the buckets its
// element writes noted), so an even version that has not moved since a read began means no
// write to an element of that bucket started since. Every element write goes through the Txn's
// element calls (PutRaw, PutRawRewritable, DeleteRaw, EraseOnceRaw), which note the bucket;
// extra bumps (a member's write rolled back) only retire records early. A DeleteDb's range
// deletion bumps nothing: it deletes the collections' metadata too, and an element is read only
// through a live metadata record's version (a key made again gets a new version, so new keys).
// Thread-safe: any thread reads or bumps, no lock.
#pragma once

#include <xxhash.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

namespace sluice::internal {

class ElementVersions {
 public:
  // 512 KB of versions. A hot collection's members spread over all of them, so a write retires
  // ~1/65536 of the cached members.
  static constexpr size_t kBuckets = size_t{1} << 16;

  ElementVersions() : versions_(new std::atomic<uint64_t>[kBuckets]()) {}

  static size_t BucketOf(uint32_t cf_id, std::string_view key) {
    return static_cast<size_t>(XXH3_64bits_withSeed(key.data(), key.size(), cf_id) &
                               (kBuckets - 1));
  }
  uint64_t Version(size_t bucket) const {
    return versions_[bucket].load(std::memory_order_seq_cst);
  }
  // Once before the write (odd: in flight) and once after it (even).
  void Bump(size_t bucket) { versions_[bucket].fetch_add(1, std::memory_order_seq_cst); }

 private:
  std::unique_ptr<std::atomic<uint64_t>[]> versions_;
};

}  // namespace sluice::internal
