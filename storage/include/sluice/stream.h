// The stream type's values, as Store::Transaction's stream operations take and return them
// (transaction.h; storage/types/stream*.cc; docs/engine.md "Streams"). Plain data; no I/O.
#pragma once

#include <compare>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace sluice {

// A stream entry ID, <ms>-<seq>, ordered as Redis orders them.
struct StreamId {
  uint64_t ms = 0;
  uint64_t seq = 0;
  friend auto operator<=>(const StreamId&, const StreamId&) = default;
  static constexpr StreamId Max() {
    return {std::numeric_limits<uint64_t>::max(), std::numeric_limits<uint64_t>::max()};
  }
  bool IsZero() const { return ms == 0 && seq == 0; }
  // The next / previous ID; false (unchanged) at the end of the ID space.
  bool Increment();
  bool Decrement();
  std::string ToString() const;  // "<ms>-<seq>"
};

// One entry: its ID and its field/value pairs, flat (field, value, field, value, ...).
struct StreamEntry {
  StreamId id;
  std::vector<std::string> fields;
};

// XADD's and XTRIM's trimming. `approx` (the `~` form) removes only whole nodes, as Redis does
// with its radix-tree nodes of at most 100 entries or 4 KB (Sluice keeps the same node
// boundaries). `limit` 0: no limit on the entries removed.
struct StreamTrim {
  enum class By : uint8_t { kNone, kMaxLen, kMinId } by = By::kNone;
  bool approx = false;
  int64_t max_len = 0;
  StreamId min_id;
  int64_t limit = 0;
};

struct StreamAddOptions {
  bool no_mkstream = false;
  // kAuto: "*"; kAutoSeq: "<ms>-*" (id.ms given); kExplicit: the whole id given.
  enum class IdMode : uint8_t { kAuto, kAutoSeq, kExplicit } mode = IdMode::kAuto;
  StreamId id;
  StreamTrim trim;
};

struct StreamAddReply {
  // kNoStream: NOMKSTREAM and no key (nothing written). kIdTooSmall: the ID is not above the
  // stream's last ID. kExhausted: the last ID is the largest there is.
  enum class Outcome : uint8_t { kAdded, kNoStream, kIdTooSmall, kExhausted } outcome;
  StreamId id;
};

// The metadata Redis exposes (XINFO STREAM).
struct StreamInfo {
  int64_t length = 0;
  StreamId last_id;
  StreamId max_deleted_id;
  StreamId first_id;  // 0-0 when empty
  uint64_t entries_added = 0;
  int64_t groups = 0;
  int64_t nodes = 0;  // Redis's radix-tree keys (listpack nodes)
};

// XSETID's arguments; entries_added / max_deleted_id unset: unchanged.
struct StreamSetIdOptions {
  StreamId last_id;
  std::optional<int64_t> entries_added;
  std::optional<StreamId> max_deleted_id;
};

// What stream operations report besides their value, for the server to spell Redis's error.
enum class StreamError : uint8_t {
  kNone,
  kNoKey,                // the key does not exist
  kNoGroup,              // the group does not exist
  kGroupExists,          // XGROUP CREATE of an existing group (BUSYGROUP)
  kSetIdSmallerThanTop,  // XSETID below the last entry
  kSetIdEntriesAdded,    // XSETID's ENTRIESADDED below the length
};

}  // namespace sluice
