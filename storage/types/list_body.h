// A list's elements in either of its two layouts, behind one interface: lists.cc runs every list
// command on a ListBody and never sees the layout. Internal header.
//
// Inline (metadata flag kMetaInline): the elements are in the metadata's extra, in order, each
// [varint length][bytes]. A small list is then one RocksDB entry: a read is one point read, a
// write one Put, and the list column family is not touched (no iterator, no element keys in its
// memtable). Redis keeps small lists in one listpack for the same reason.
//
// Big: one entry per element in the `list` column family, keyed by its position, an int64
// encoded order-preserving (sign bit flipped, big-endian), so the elements' byte order is the
// list's order. The metadata's extra holds the ends: [head: 8 bytes LE][tail: 8 bytes LE], the
// positions of the first element and one past the last; count == tail - head. A push at the
// left takes head - 1, at the right tail: O(1) element writes. Index i is position head + i.
// Changes in the middle (LREM, LINSERT) rewrite the elements after the first change.
//
// Save picks the layout. An inline list that outgrows Options::list_inline_max_entries or
// list_inline_max_bytes moves to the big layout (its elements written at positions 0..n-1 of
// its version, which never had element entries). A big list that an operation shrank to half
// of both limits or less moves back inline under a fresh version: its element entries become
// invisible at once, and the element compaction filter drops them (collection.h). The halves
// keep a list that hovers at a limit from moving back and forth on every call.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collection.h"

namespace sluice::internal {

class ListBody {
 public:
  using End = Store::Transaction::ListEnd;
  using Elements = std::vector<std::string>;

  // `c` exists or was Created, and outlives this body. Reads nothing but the metadata it holds.
  explicit ListBody(Collection& c);

  int64_t size() const;
  bool is_inline() const { return inline_; }

  // The element at index (0 <= index < size()).
  Result<std::string> At(int64_t index);
  // Up to n elements from index `from` on (0 <= from), in order.
  Result<Elements> Range(int64_t from, int64_t n);
  // Calls visit(index, element) from the head (or from the tail, indexes descending) until it
  // returns false or the elements run out.
  Status Visit(bool from_tail, const std::function<bool(int64_t, std::string_view)>& visit);

  // Writes are staged in the unit (big layout) or in memory (inline) until Save.
  void Set(int64_t index, std::string_view element);  // 0 <= index < size()
  void Push(End end, std::string_view element);
  Result<std::string> Pop(End end);  // size() > 0
  // Keeps the elements at indexes [from, to) and drops the rest (0 <= from <= to <= size()).
  void Keep(int64_t from, int64_t to);
  // Replaces the elements from index `from` to the end with `rest`.
  void ReplaceFrom(int64_t from, Elements rest);

  // Stages the metadata (the key deleted when the list is empty), choosing the layout.
  Status Save();

 private:
  struct Ends {
    int64_t head = 0;
    int64_t tail = 0;
  };
  void LoadInline();
  void SaveInline();
  void MoveToBig();
  Status MaybeMoveInline();

  Collection& c_;
  const int64_t max_entries_;
  const size_t max_bytes_;
  bool inline_;
  bool shrank_ = false;  // an element was removed since the body was made
  // Inline: the elements. Made on first use: a deque allocates even empty (two blocks), and a
  // big list's commands never use it.
  std::deque<std::string>& items() {
    if (!items_) items_.emplace();
    return *items_;
  }
  std::optional<std::deque<std::string>> items_;
  Ends ends_;  // big: the ends
};

}  // namespace sluice::internal
