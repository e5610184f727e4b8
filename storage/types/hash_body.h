// A hash's fields in either of its two layouts, behind one interface: hashes.cc runs every hash
// command on a HashBody and never sees the layout. Internal header.
//
// Inline (metadata flag kMetaInline): the fields are in the metadata's extra, in insertion order
// (Redis's listpack order), each [varint field length][field][varint value length][value]. A
// small hash is then one RocksDB entry: HGETALL is one point read, HSET one read and one write,
// and the hash column family is not touched (no iterator, no field keys in its memtable). Redis
// keeps small hashes in one listpack for the same reason, and rewrites it on every change too.
//
// Big: one entry per field in the `hash` column family, its value [insertion number: 8 bytes
// BE][value bytes]; the metadata's extra holds the next insertion number (8 bytes LE), so reads
// return fields in insertion order and an overwrite keeps a field's place.
//
// Save picks the layout. A Created hash (count 0) starts inline when
// Options::hash_inline_max_fields is positive. An inline hash moves out, its fields written with
// insertion numbers 0..n-1 under its version (which never had field entries), once Redis would
// have converted it (kMetaBigEncoding: hashes.cc sets it before Save) or it outgrows
// Options::hash_inline_max_fields or hash_inline_max_bytes. It never moves back, as Redis never
// turns a hashtable back into a listpack; a hash stored before this layout existed (no flag) is
// big.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collection.h"

namespace sluice::internal {

// The value of a big hash's stored field entry (its insertion number stripped).
std::string_view HashFieldValue(std::string_view stored);

class HashBody {
 public:
  using FieldValues = std::vector<std::pair<std::string, std::string>>;

  // `h` exists or was Created, and outlives this body. Reads nothing but the metadata it holds.
  explicit HashBody(Collection& h);

  bool is_inline() const { return inline_; }

  // The field's value; nullopt when the field is missing.
  Result<std::optional<std::string>> Get(std::string_view field);
  // Sets a field (count and insertion order kept in the metadata); true when it was new.
  Result<bool> Set(std::string_view field, std::string_view value);
  // Removes a field; true when it was there.
  Result<bool> Erase(std::string_view field);
  // Every field with its value, in insertion order.
  Result<FieldValues> All();

  // Stages the metadata (the key deleted when the hash is empty), choosing the layout. Call
  // after the last change, once kMetaBigEncoding is up to date.
  void Save();

 private:
  // Inline: the fields decoded from the metadata (on the first erase; reads scan the bytes, and
  // sets edit them in place until then).
  FieldValues& Fields();
  // Inline, nothing decoded: sets the field in the metadata's bytes. True when it was new;
  // nullopt, nothing changed, when the bytes do not read to their end (damaged).
  std::optional<bool> SetInPlace(std::string_view field, std::string_view value);
  bool FitsInline() const;
  void MoveToBig();

  Collection& h_;
  const int64_t max_fields_;
  const size_t max_bytes_;
  bool inline_;
  std::optional<FieldValues> fields_;
};

}  // namespace sluice::internal
