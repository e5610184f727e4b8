// A small collection's elements kept inside its metadata record (metadata flag
// kMetaInlineElements): every element column family's entries in one buffer, the metadata's
// extra, so that a command on a small sorted set is one point read and one write of the key, as
// Redis's listpack is one allocation. Collection (collection.h) serves Get, Put, Erase and
// NewIterator from here while the flag is set, so the type code above it is the same for both
// layouts; Collection::Save moves the elements out into their column families once the
// collection passes its limits. Internal header.
//
// Buffer format: entries sorted by (column family, element bytes), each
// [cf: 1][varint element length][element][varint value length][value].
#pragma once

#include <rocksdb/iterator.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "collection_layout.h"

namespace sluice::internal {

class InlineElements {
 public:
  // Operates on `buffer` (the metadata's extra), which outlives it.
  explicit InlineElements(std::string& buffer) : buf_(buffer) {}

  // The element's value, a view into the buffer until the next change; nullopt when missing.
  std::optional<std::string_view> Find(ElementCf cf, std::string_view element) const;
  // Inserts the element or replaces its value.
  void Put(ElementCf cf, std::string_view element, std::string_view value);
  void Erase(ElementCf cf, std::string_view element);
  // Calls visit(cf, element, value) for every entry in buffer order.
  void ForEach(
      const std::function<void(ElementCf, std::string_view, std::string_view)>& visit) const;

  // An iterator over cf's entries whose element starts with element_prefix, with keys as the
  // column family's iterator would show them: sub_key_prefix + element. It reads a copy of the
  // entries made now, so changes through this object do not disturb it.
  std::unique_ptr<rocksdb::Iterator> NewIterator(std::string_view sub_key_prefix, ElementCf cf,
                                                 std::string_view element_prefix) const;

 private:
  struct Located {
    size_t at;   // where the entry starts, or where it would be inserted
    size_t end;  // one past the entry (== at when not found)
    bool found;
    std::string_view value;
  };
  Located Locate(ElementCf cf, std::string_view element) const;

  std::string& buf_;
};

}  // namespace sluice::internal
