// The memtable's nodes (memtable.cc has the structure and the concurrency contract): RocksDB's
// entry encoding as the memtable reads it, the user-key order, Version and KeyNode. Internal to
// memtable.cc; a header of its own so that the list's file keeps to the list.
#pragma once

#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>

namespace sluice::internal::memtable_nodes {

// ---- RocksDB's entry encoding (MemTable::Add): varint32 internal-key length, user key, 8-byte
// little-endian tag (sequence << 8 | type), then the value, which the memtable never reads.

inline const char* DecodeVarint32(const char* p, uint32_t* v) {
  uint32_t result = 0;
  for (int shift = 0; shift <= 28; shift += 7) {
    const uint32_t byte = static_cast<uint8_t>(*p++);
    result |= (byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) break;
  }
  *v = result;
  return p;
}

inline uint64_t LoadLE64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;  // x86-64 and every RocksDB target Sluice builds for are little-endian
}

inline uint64_t LoadBE64(const char* p) { return __builtin_bswap64(LoadLE64(p)); }

// An internal key taken apart. Internal-key order: user keys ascending, then tags descending
// (the newest version of a key first).
struct Key {
  const char* user;
  uint32_t user_size;
  uint64_t tag;
};

inline Key KeyOfInternal(const char* ikey, uint32_t size) {
  return Key{ikey, size - 8, LoadLE64(ikey + size - 8)};
}

inline Key KeyOfEntry(const char* entry) {
  uint32_t size;
  const char* ikey = DecodeVarint32(entry, &size);
  return KeyOfInternal(ikey, size);
}

// BytewiseComparator's order: unsigned bytes, a prefix first. The first 8 bytes compare as one
// integer (Sluice's keys start with the database and the slot).
inline int CompareUser(const char* a, uint32_t an, const char* b, uint32_t bn) {
  const uint32_t n = std::min(an, bn);
  int r;
  if (n >= 8) {
    const uint64_t x = LoadBE64(a);
    const uint64_t y = LoadBE64(b);
    if (x != y) return x < y ? -1 : 1;
    r = std::memcmp(a + 8, b + 8, n - 8);
  } else {
    r = std::memcmp(a, b, n);
  }
  if (r != 0) return r;
  return an == bn ? 0 : (an < bn ? -1 : 1);
}

inline bool SameUser(const Key& a, const Key& b) {
  return a.user_size == b.user_size && std::memcmp(a.user, b.user, a.user_size) == 0;
}

inline uint64_t HashUser(const Key& k) { return XXH3_64bits(k.user, k.user_size); }

inline size_t RoundUp8(size_t n) { return (n + 7) & ~size_t{7}; }

// ---- Nodes.

struct Version {
  std::atomic<Version*> older;
  const char* Entry() const { return reinterpret_cast<const char*>(this + 1); }
  char* Entry() { return reinterpret_cast<char*>(this + 1); }
  Key GetKey() const { return KeyOfEntry(Entry()); }
  Version* Older() const { return older.load(std::memory_order_acquire); }
};

// One per distinct user key: its versions, newest first, and its place in a hash bucket. Its
// place in key order is kept apart (memtable_order.h).
struct KeyNode {
  Version* Newest() const { return newest.load(std::memory_order_acquire); }
  Key UserKey() const { return Newest()->GetKey(); }

  std::atomic<Version*> newest;
  std::atomic<KeyNode*> hash_next;
  uint64_t hash;
  std::atomic<uint64_t> oldest_tag;  // the tag of the chain's last version
};

}  // namespace sluice::internal::memtable_nodes
