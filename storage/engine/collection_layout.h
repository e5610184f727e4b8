// The collection layout's codec (hashes, lists, sets, sorted sets): a metadata record at the key,
// and one RocksDB entry per element, in column families of their own. The engine needs it (the
// element compaction filter, expiry.h, decides by it), so it lives here; the Collection class that
// works on it is types/collection.h. Internal header; docs/engine.md has the picture.
//
// Metadata: the key's ordinary entry in the default column family, with the usual value header
// (kind kHash/kList/kSet/kZSet, absolute expiry) and this payload:
//   [version: 8 bytes LE][count: 8 bytes LE][flags: 1 byte][extra: type-specific, opaque here]
// Element sub-key, in the element column family of its type (ElementCf):
//   [db: 1][slot: 2 BE][user key length: 4 BE][user key][version: 8 BE][element bytes]
// so one collection's elements are one contiguous range, ordered by element bytes. The version
// is fresh for every new collection (Store::Impl::NewCollectionVersion), so deleting, expiring or
// overwriting a collection is one write of the metadata: sub-keys of any other version are
// invisible (reads go through the metadata's version) and the element compaction filter drops
// them (a sub-key whose metadata is missing, expired, of another kind or another version).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "encoding.h"
#include "sluice/store.h"

namespace sluice::internal {

// Metadata flag bits.
// Redis has converted this collection to its big encoding (hashtable, skiplist): sticky, as in
// Redis, until the key is deleted.
inline constexpr uint8_t kMetaBigEncoding = 0x01;
// The elements are inside the metadata's extra, not in the element column family: a small list
// (storage/types/list_body.h) or hash (storage/types/hash_body.h).
inline constexpr uint8_t kMetaInline = 0x02;
// Every element column family's entries are inside the metadata's extra (a small sorted set:
// storage/types/inline_elements.h), served by Collection itself.
inline constexpr uint8_t kMetaInlineElements = 0x04;
// A big sorted set's extra also holds its fence, the element above which nothing is live
// (storage/types/zset_head.cc): [varint boundary length][head boundary][fence].
inline constexpr uint8_t kMetaZFence = 0x08;

struct CollectionMeta {
  uint64_t version = 0;
  int64_t count = 0;  // elements; a stored collection always has at least one
  uint8_t flags = 0;
  std::string extra;  // type-specific state (a hash's next insertion number, a list's ends)
};

std::string EncodeMeta(const CollectionMeta& m);
// The same into `out` (replaced; its capacity kept: no allocation once warm).
void EncodeMetaTo(const CollectionMeta& m, std::string* out);
// nullopt when the payload is too short (corruption).
std::optional<CollectionMeta> DecodeMeta(std::string_view payload);

// [db][slot][key length][key][version]: the prefix every element sub-key of one collection
// version starts with.
void EncodeSubKeyPrefix(int db, std::string_view user_key, uint64_t version, std::string* out);
// Splits a sub-key: the metadata's encoded key (EncodeKey), the version and the element.
// False when it is not a valid sub-key.
bool DecodeSubKey(std::string_view sub_key, std::string* meta_key, uint64_t* version,
                  std::string_view* element);
// The first key after every key starting with `prefix` ("" when there is none).
std::string PrefixEnd(std::string_view prefix);

// The element column families a kind uses (kZSet: kZSet and kZScore), as a bit set of
// 1 << ElementCf; 0 for the other kinds.
uint32_t ElementCfsOf(ValueKind kind);

}  // namespace sluice::internal
