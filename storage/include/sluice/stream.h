// The stream type's values, as Store::Transaction's stream operations take and return them
// (transaction.h; storage/types/stream*.cc; docs/engine.md "Streams"). Plain data; no I/O.
#pragma once

#include <compare>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
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
  // "<ms>-<seq>" formatted in place (no allocation: an ID with a sequence of 10 or more is past
  // std::string's inline capacity), for a reply.
  struct Text {
    char bytes[41];
    uint8_t size;
    operator std::string_view() const { return {bytes, size}; }  // NOLINT: a view of the text
  };
  Text ToText() const;
};

// One entry: its ID and its field/value pairs, flat (field, value, field, value, ...).
struct StreamEntry {
  StreamId id;
  std::vector<std::string> fields;
  bool missing = false;  // a pending ID whose entry was deleted (XREADGROUP's history: nil)
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

// What a trim (XTRIM's, or XADD's own) removed and the stream it left: what a replica is sent in
// place of an approximate trim (`MAXLEN = length` or `MINID = first_id`), known without
// reading the stream again.
struct StreamTrimOutcome {
  int64_t removed = 0;
  int64_t length = 0;  // entries left
  StreamId first_id;   // no entry left is below it (0-0 when none is left)
  StreamId last_id;    // the stream's last ID (entries deleted or trimmed included)
  bool operator==(const StreamTrimOutcome&) const = default;
};

struct StreamAddReply {
  // kNoStream: NOMKSTREAM and no key (nothing written). kIdTooSmall: the ID is not above the
  // stream's last ID. kExhausted: the last ID is the largest there is.
  enum class Outcome : uint8_t { kAdded, kNoStream, kIdTooSmall, kExhausted } outcome;
  StreamId id;
  StreamTrimOutcome trim;  // kAdded only: what the add's trimming did
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

// Whether a stream key and one of its groups exist (checked before a group command runs).
enum class StreamGroupProbe : uint8_t { kFound, kNoKey, kNoGroup };

struct StreamGroupInfo {
  std::string name;
  int64_t consumers = 0;
  int64_t pending = 0;
  StreamId last_delivered;
  int64_t entries_read = -1;   // -1: unknown (null)
  std::optional<int64_t> lag;  // nullopt: unknown (null)
};

struct StreamConsumerInfo {
  std::string name;
  int64_t pending = 0;
  int64_t seen_ms = 0;  // when it last read or claimed (absolute ms)
};

struct StreamPendingEntry {
  StreamId id;
  std::string consumer;
  int64_t delivery_ms = 0;  // absolute
  int64_t delivery_count = 0;
};

struct StreamPendingSummary {
  int64_t count = 0;
  StreamId first, last;
  std::vector<std::pair<std::string, int64_t>> consumers;  // with pending > 0, by name
};

// XCLAIM's options: `delivery_ms` the new delivery time (absolute; IDLE and TIME resolved by
// the caller), retry_count -1: incremented unless JUSTID.
struct StreamClaimOptions {
  int64_t min_idle_ms = 0;
  std::optional<int64_t> delivery_ms;
  int64_t retry_count = -1;
  bool force = false;
  bool justid = false;
  StreamId last_id;
};

// What a group read or claim (XREADGROUP, XCLAIM, XAUTOCLAIM) changed in its group, as the op
// itself saw it: what the server needs for the replication stream and the
// xgroup-createconsumer event without reading the group again.
struct StreamGroupChange {
  bool consumer_created = false;  // the command's consumer did not exist before it
  bool group_moved = false;       // the group's last delivered ID or entries-read changed
  StreamId last_delivered;        // the group's, after (when the op got as far as writing it)
  int64_t entries_read = -1;      // the group's, after
  // Each entry the op made pending or delivered again, as it is now pending, in the op's order.
  std::vector<StreamPendingEntry> pending;
};

// Claimed entries (JUSTID: no fields); for XAUTOCLAIM the next cursor; the pending IDs dropped
// because their entries were gone (XAUTOCLAIM replies them; XCLAIM does not, as Redis, but a
// replica must drop them too).
struct StreamClaimReply {
  std::vector<StreamEntry> claimed;
  StreamId next;
  std::vector<StreamId> deleted;
};

}  // namespace sluice
