// Key and value codec of the engine's RocksDB keyspace. Pure functions; thread-safe.
//
// RocksDB key:   [db: 1 byte, 0..15][slot: 2 bytes big-endian][user key bytes]
//   so each logical database is one contiguous prefix range [db, db + 1), and within it each
//   Redis Cluster hash slot (CRC16 of the key or of its {hash tag}, mod 16384) is one contiguous
//   range [db slot, db slot+1): a cluster mode can walk or move one slot's keys without a scan.
//
// RocksDB value: [tag: 1 byte][expire_at_ms: 8 bytes little-endian, only if tag bit 7][payload]
//   tag bits 0-3: ValueKind (kString, kLeaky, kSliding, kConc, kHash, kList, kSet, kZSet, kStream)
//   tag bits 4-6: format version, 0 (anything else is rejected as corrupt)
//   tag bit  7:   the value has an absolute expiry (ms since the Unix epoch) after the tag
// A persistent value costs 1 byte of header, an expiring one 9.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "sluice/store.h"

namespace sluice::internal {

inline constexpr int64_t kNoExpiry = -1;

// The column families holding collection elements (collection_layout.h), one per element kind,
// opened in this order after the default one (the keys) by Store::Impl::Open.
enum class ElementCf : int { kHash = 0, kSet = 1, kList = 2, kZSet = 3, kZScore = 4, kStream = 5 };
inline constexpr int kNumElementCfs = 6;
// "hash", "set", "list", "zset", "zscore", "stream"
const char* ElementCfName(ElementCf cf);

// A decoded value. expire_at_ms is kNoExpiry or an absolute time in ms since the epoch.
// raw_encoding: a string edited in place (APPEND to it, SETRANGE, SETBIT, BITFIELD), whose
// OBJECT ENCODING Redis reports as "raw" whatever its bytes; kept while the value is (EXPIRE,
// PERSIST, RENAME, MOVE, COPY), dropped by any write of a new value (SET, INCR, ...).
struct Entry {
  ValueKind kind = ValueKind::kString;
  int64_t expire_at_ms = kNoExpiry;
  std::string payload;
  bool raw_encoding = false;
};

// Same as Entry but viewing the bytes it was decoded from (valid while they live).
struct EntryView {
  ValueKind kind = ValueKind::kString;
  int64_t expire_at_ms = kNoExpiry;
  std::string_view payload;
  bool raw_encoding = false;
};

// Redis's rule: a key is expired once the clock has passed its expiry millisecond.
inline bool IsExpired(int64_t expire_at_ms, int64_t now_ms) {
  return expire_at_ms != kNoExpiry && now_ms > expire_at_ms;
}

// Little-endian fixed 64-bit integers (the metadata's counters and ends): 8 bytes at p.
uint64_t DecodeFixed64(const char* p);
void AppendFixed64(std::string* out, uint64_t v);

// LEB128 varints (RocksDB's encoding too): 7 bits a byte, low bits first.
size_t VarintLength(uint64_t v);
void AppendVarint(std::string* out, uint64_t v);
// Reads a varint at *at in s, advancing *at; false when s ends first or it runs past 64 bits.
bool ReadVarint(std::string_view s, size_t* at, uint64_t* v);

// Redis Cluster's hash slot of a user key: CRC16 (XMODEM) of the key, or of the part between
// the first '{' and the first '}' after it when that part is not empty, mod 16384.
uint16_t KeySlot(std::string_view user_key);
// Bytes before the user key in an encoded key: the db and the slot.
inline constexpr size_t kKeyPrefixBytes = 3;

std::string EncodeKey(int db, std::string_view user_key);
// EncodeKey into *out (replacing its contents; keeps its capacity, so reuse does not allocate).
void EncodeKeyTo(int db, std::string_view user_key, std::string* out);
// EncodeKeyTo of keys[i] into out[i], for keys the calling thread is about to use in this order
// (a pipelined batch's first keys, Store::PrefetchKeys): KeySlot on this thread then finds each
// key's slot without computing it again. Replaces what an earlier call queued.
void EncodeKeysAhead(int db, std::span<const std::string_view> keys, std::string* out);
// The first byte of db's range, and the first byte after it (an exclusive upper bound).
std::string DbPrefix(int db);
std::string DbEnd(int db);
// Splits a RocksDB key. False when it is not a valid encoded key.
bool DecodeKey(std::string_view raw, int* db, std::string_view* user_key);

std::string EncodeValue(ValueKind kind, int64_t expire_at_ms, std::string_view payload,
                        bool raw_encoding = false);
// The bytes EncodeValue puts before the payload, written to out[0..n); returns n (1 or 9).
// raw_encoding is kept for a string only (Entry).
inline constexpr size_t kMaxValueHeader = 9;
size_t EncodeValueHeader(ValueKind kind, int64_t expire_at_ms, char (&out)[kMaxValueHeader],
                         bool raw_encoding = false);
// nullopt when the bytes are not a value of a known format (corruption).
std::optional<EntryView> DecodeValue(std::string_view raw);
// Reads only the header: the expiry, or nullopt when undecodable. Cheap (expiry cycle, key counts).
std::optional<int64_t> DecodeExpiry(std::string_view raw);

}  // namespace sluice::internal
