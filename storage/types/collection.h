// storage/types: the Redis data types (strings, hashes, lists, sets, sorted sets, limiter state,
// keys and scans) as Store::Transaction operations over the engine's units (storage/engine).
//
// This header: one collection key (hash, list, set, sorted set) inside a unit, over the layout of
// collection_layout.h (a metadata record at the key, elements in column families of their own; a
// small list keeps its elements in the metadata instead: list_body.h). Internal header;
// docs/engine.md has the picture.
//
// Every operation runs on the unit's Txn: element reads see the unit's own writes.
#pragma once

#include <rocksdb/iterator.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collection_layout.h"
#include "encoding.h"
#include "scratch.h"
#include "sluice/status.h"
#include "sluice/store.h"

namespace sluice::internal {

class Txn;

// The conversion thresholds are the process's (sluice/encoding_limits.h).

// Redis's OBJECT ENCODING name of a collection: hash listpack|hashtable, list quicklist (Redis
// 7.0), set intset|hashtable, zset listpack|skiplist.
const char* CollectionEncodingName(ValueKind kind, const CollectionMeta& meta);

// One collection key inside a unit of work. Not thread-safe; lives within one operation.
//
//   auto c = Collection::Open(txn, db, key, ValueKind::kHash, /*write=*/true);
//   if (!c.ok()) return c.status();            // kWrongType, kLockConflict, I/O
//   c->Create();                                // a version for a new key (no-op if it exists)
//   c->Put(ElementCf::kHash, field, value);
//   c->meta().count += 1;
//   c->Save();                                  // metadata written (deleted when count is 0)
class Collection {
 public:
  // Claims the key (a write or a read claim) and reads its metadata. kWrongType when the key
  // holds another kind; a missing or expired key gives exists() == false.
  static Result<Collection> Open(Txn& txn, int db, std::string_view user_key, ValueKind kind,
                                 bool write);

  // A new, empty collection at the key (Created), replacing whatever is there once Saved; reads
  // nothing. The caller has claimed the key for writing.
  static Collection NewAt(Txn& txn, int db, std::string_view user_key, ValueKind kind);

  bool exists() const { return meta_.version != 0; }
  // The elements are inside the metadata (kMetaInlineElements, inline_elements.h): Get, Put,
  // Erase and NewIterator serve them from there, and Save moves them out once the collection
  // passes its kind's inline limits (or Redis would have converted it: kMetaBigEncoding).
  bool is_inline() const { return (meta_.flags & kMetaInlineElements) != 0; }
  // Makes a new, empty collection (count 0) keep its elements inline, when its kind has inline
  // limits (sorted sets and sets: Options::zset_inline_max_*, set_inline_max_*); Create does
  // this for a new key.
  void StartInline();
  // Moves inline elements out into their column families when the collection no longer fits
  // its inline limits; Save calls it first.
  void SettleInline();
  int64_t size() const { return exists() ? meta_.count : 0; }
  ValueKind kind() const { return kind_; }
  int db() const { return db_; }
  std::string_view user_key() const { return user_key_; }
  const std::string& raw_key() const { return raw_key_; }
  CollectionMeta& meta() { return meta_; }
  const CollectionMeta& meta() const { return meta_; }
  int64_t expire_at_ms() const { return expire_at_ms_; }
  void set_expire_at_ms(int64_t at_ms) { expire_at_ms_ = at_ms; }

  // Makes a new collection: a fresh version, count 0, no flags, no expiry. No-op if it exists.
  void Create();
  // Like Create, but always a new, empty collection (overwriting: SINTERSTORE's destination).
  void Reset();
  // A fresh version for this collection, keeping its count, flags, type state and expiry: the
  // element entries of the old version become invisible (and garbage for the compaction
  // filter). For a layout that moves its elements out of the element column families.
  void Renew();

  // Element access (the collection must exist, or have been Created).
  Status Get(ElementCf cf, std::string_view element, std::string* value, bool* found);
  // Get of one of a run of elements read one after another, each once: those in
  // [lower, upper), upward or, when `descending`, downward (Txn::GetRawInRun reads the run's
  // next stored records ahead when this one comes from a table file).
  Status GetInRun(ElementCf cf, std::string_view element, std::string_view lower,
                  std::string_view upper, bool descending, std::string* value, bool* found);
  void Put(ElementCf cf, std::string_view element, std::string_view value);
  // Put of an element the unit (or its commit group's next members) will likely write again
  // (a stream's node, group or consumer record): Txn::PutRawRewritable.
  void PutRewritable(ElementCf cf, std::string_view element, std::string_view value);
  void Erase(ElementCf cf, std::string_view element);
  // Erase of an element written only while absent (Txn::EraseOnceRaw has the contract).
  void EraseOnce(ElementCf cf, std::string_view element);
  // The unit's view of this version's elements in cf, ordered by element bytes; element bytes
  // of an entry: ElementOf(it->key()). Do not write through the Txn while iterating.
  std::unique_ptr<rocksdb::Iterator> NewIterator(ElementCf cf);
  // The same, bounded to the elements whose bytes start with `element_prefix`: a seek or step
  // past the last of them ends there, where the unbounded form walks on over whatever follows,
  // erased elements' tombstones included (a stream's acknowledged entries, until compaction).
  std::unique_ptr<rocksdb::Iterator> NewIterator(ElementCf cf, std::string_view element_prefix);
  std::string_view ElementOf(const rocksdb::Slice& sub_key) const {
    return sub_key.ToStringView().substr(prefix_->size());
  }
  // The sub-key of element in this version (for Seek on an iterator).
  std::string SubKey(std::string_view element) const;

  // Stages the metadata: written when the count is positive, the key deleted when it is 0
  // (Redis removes empty collections). Call once the elements are staged.
  void Save();
  // Counts the key as written by this unit (it is among the written keys the commit observers,
  // WATCH and client tracking, are told of) without staging its unchanged metadata: for a write
  // of elements alone.
  void Touch();

  Txn& txn() const { return *txn_; }

  // A sorted set's head fell under its minimum during this operation and is topped up once,
  // when the set is saved (zset_head.cc: a bulk erase tops it up once, not every 16 elements).
  bool zhead_short() const { return zhead_short_; }
  void set_zhead_short(bool v) { zhead_short_ = v; }

 private:
  // Erase and EraseOnce: a Delete, or a SingleDelete when `once`.
  void EraseElement(ElementCf cf, std::string_view element, bool once);
  Collection(Txn& txn, int db, std::string_view user_key, ValueKind kind);
  void SetPrefix();

  Txn* txn_;
  int db_;
  std::string user_key_;
  std::string raw_key_;
  ValueKind kind_;
  CollectionMeta meta_;  // version 0: no collection
  int64_t expire_at_ms_ = kNoExpiry;
  PooledString prefix_;   // EncodeSubKeyPrefix of the current version
  PooledString scratch_;  // a sub-key being read or written
  bool zhead_short_ = false;
};

// One page of an element scan (HSCAN, SSCAN, ZSCAN) of a collection in its big encoding:
// `count` elements examined from the cursor's position, in element order; elements matching
// `match` (a glob) returned with their stored values. next_cursor 0 ends the scan. Cursors are
// ids in the store's cursor table, bound to the collection's key and version; an unknown
// cursor restarts from the first element.
struct ElementScanPage {
  uint64_t next_cursor = 0;
  std::vector<std::pair<std::string, std::string>> items;  // element, stored value
};
Result<ElementScanPage> ScanElements(Collection& c, ElementCf cf, uint64_t cursor,
                                     std::optional<std::string_view> match, int64_t count);

// One element (and its stored value) from a random point of the collection's range in cf:
// between its first and last element, past their common prefix, so elements sharing a prefix
// ("user:1", "user:2") are still spread. O(log n); roughly, not exactly, uniform (as RANDOMKEY).
// The collection must exist.
Result<std::pair<std::string, std::string>> SeekRandomElement(Collection& c, ElementCf cf);

// Copies every element of src (all its column families) into dst, which must exist (Created)
// and be empty. O(n). Nothing for an inline src: its metadata, which the caller copies, holds
// its elements.
Status CopyElements(Collection& src, Collection& dst);

// RENAME and COPY of a collection: a new collection at (dst_db, dst) with src's elements, count,
// flags, type state and expiry (the sub-keys are named after the key, so they are copied: O(n)).
// `src` must be a live collection of kind `kind`; the caller has claimed both keys.
Status CopyCollection(Txn& txn, ValueKind kind, int src_db, std::string_view src, int dst_db,
                      std::string_view dst);

}  // namespace sluice::internal
