// One stream key inside a unit, over the collection layout (collection.h): the metadata record
// at the key carries the stream's state (StreamState, in the metadata's `extra`), and every
// entry, node, group, pending entry and consumer is a sub-key in the `stream` element column
// family. Internal header; docs/engine.md "Streams" has the picture.
//
// Sub-keys (element bytes after the collection's version prefix):
//   'e' [id: 16 BE]                           -> entry: [varint pairs]([varint len][bytes])*
//   'n' [first id: 16 BE]                     -> node (Redis's listpack node, emulated)
//   'g' [group]                               -> group: last delivered ID, entries-read, counts
//   'p' [group len: 4 BE][group][id: 16 BE]   -> pending entry: delivery time, count, consumer
//   'c' [group len: 4 BE][group][consumer]    -> consumer: seen time, pending count
//   'q' [group len][group][consumer len: 4 BE][consumer][id] -> "" (the consumer's own PEL)
// so entries, a group's PEL and its consumers each are one ordered range: a range read seeks,
// an acknowledgement is point writes, and a trim or delete touches only what it removes.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collection.h"
#include "sluice/stream.h"
#include "sluice/stream_whole.h"

namespace sluice::internal {

// The stream's own metadata (collection meta's extra). The collection's count is always 1 (an
// empty stream stays a key, as in Redis).
struct StreamState {
  StreamId last_id;
  StreamId max_deleted_id;
  // The first live entry's ID (0-0 when empty). Invariant: never above the first live entry, so
  // reads and trims may start there and skip the tombstones of what was removed before it.
  StreamId first_id;
  uint64_t entries_added = 0;
  int64_t length = 0;
  int64_t groups = 0;
  int64_t nodes = 0;
  bool has_tail = false;  // tail_first names the last node
  StreamId tail_first;
  // A lower bound of the first node's live entries (0: not known). Lets an approximate MAXLEN
  // trim that cannot remove the first node whole (length - live < MAXLEN: the usual case for a
  // capped stream, BullMQ's events on every job) decide without reading the node. Set when a
  // trim reads the first node; an append only adds entries, so it stays a bound; reset by
  // anything that erases a node or deletes an entry. Stored last in the metadata, optional (a
  // record written before it decodes as 0).
  int64_t first_node_live_floor = 0;
};

// Redis's listpack node, as much as trimming and XINFO need: its first ID (the key), last ID,
// live and deleted entries, the listpack's byte size, and its master entry's fields.
struct StreamNode {
  StreamId first;
  StreamId last;
  int64_t live = 0;
  int64_t deleted = 0;
  int64_t bytes = 0;
  std::vector<std::string> master_fields;
};

struct StreamGroup {
  StreamId last_id;
  int64_t entries_read = -1;  // -1: unknown (Redis's SCG_INVALID_ENTRIES_READ)
  int64_t pending = 0;
  int64_t consumers = 0;
  // At or above every ID ever added to the group's PEL, so that a new delivery above it needs no
  // lookup of a pending entry that cannot be there. Max: not known (a record written before the
  // field, or by a path that does not keep it): every delivery looks.
  StreamId pel_max = StreamId::Max();
  // At or below every ID in the group's PEL, so that walks of the PEL from its start (XPENDING,
  // XAUTOCLAIM 0-0) seek past what was acknowledged below it instead of stepping over its
  // deletion markers. Max: the PEL is empty. 0-0: not known (a record written before the field).
  // A new pending ID below it lowers it; acknowledging it moves it one ID up; XAUTOCLAIM, walking
  // from it, leaves it at the first entry it found (out-of-order acknowledgements leave it on
  // IDs already gone until then).
  StreamId pel_min;
};

struct StreamPending {
  int64_t delivery_ms = 0;
  int64_t delivery_count = 0;
  std::string consumer;
};

struct StreamConsumer {
  int64_t seen_ms = 0;
  int64_t pending = 0;
};

void AppendStreamId(std::string* out, StreamId id);  // 16 bytes big-endian
StreamId ReadStreamId(std::string_view bytes);       // the first 16 bytes

class Stream {
 public:
  // kWrongType when the key holds another kind; exists() false for a missing key.
  static Result<Stream> Open(Txn& txn, int db, std::string_view key, bool write);

  bool exists() const { return c_.exists(); }
  void Create();  // an empty stream (no-op when it exists)
  void Save();    // stages the metadata
  // The key counts as written (Collection::Touch) with its metadata unchanged: a group's records
  // changed, not the stream's state.
  void Touch() { c_.Touch(); }
  StreamState& state() { return st_; }
  Collection& collection() { return c_; }

  // Entries.
  Status Range(StreamId start, StreamId end, bool rev, int64_t count,
               std::vector<StreamEntry>* out);
  Status GetEntry(StreamId id, StreamEntry* out, bool* found);
  Status Append(StreamId id, std::span<const std::string_view> fields);
  Status Delete(StreamId id, bool* deleted);
  Result<int64_t> Trim(const StreamTrim& trim);

  // Groups, their pending entries and consumers.
  Status GetGroup(std::string_view name, StreamGroup* out, bool* found);
  void PutGroup(std::string_view name, const StreamGroup& g);
  Status ListGroups(std::vector<std::pair<std::string, StreamGroup>>* out);
  Status DestroyGroup(std::string_view name);
  Status GetPending(std::string_view group, StreamId id, StreamPending* out, bool* found);
  void PutPending(std::string_view group, StreamId id, const StreamPending& p);
  void ErasePending(std::string_view group, StreamId id, std::string_view consumer);
  // Pending entries of the group `g` named `group` (or of one consumer) with start <= id <= end,
  // at most count (0: all), in ID order. The walk starts at g.pel_min when start is below it.
  Status ListPending(std::string_view group, const StreamGroup& g, const std::string* consumer,
                     StreamId start, StreamId end, int64_t count,
                     std::vector<std::pair<StreamId, StreamPending>>* out);
  Status GetConsumer(std::string_view group, std::string_view name, StreamConsumer* out,
                     bool* found);
  void PutConsumer(std::string_view group, std::string_view name, const StreamConsumer& c);
  Status ListConsumers(std::string_view group,
                       std::vector<std::pair<std::string, StreamConsumer>>* out);
  // Removes the consumer and its pending entries (counted off *g); the number it had pending.
  Result<int64_t> DeleteConsumer(std::string_view group, std::string_view name, StreamGroup* g);
  // The group's first and last pending IDs (unchanged when the PEL is empty).
  // The first and last IDs of the PEL of the group `g` named `group` (found from g.pel_min up).
  Status PendingEdges(std::string_view group, const StreamGroup& g, StreamId* first,
                      StreamId* last);

  // Redis's streamEstimateDistanceFromFirstEverEntry: the logical read counter of `id`, or -1
  // when it cannot be known.
  int64_t EstimateEntriesRead(StreamId id) const;
  // streamRangeHasTombstones from `start` to the end.
  bool HasTombstonesFrom(StreamId start) const;
  // XINFO's lag of a group; nullopt when Redis replies null.
  std::optional<int64_t> Lag(const StreamGroup& g) const;
  // A group delivered `id` (streamReplyWithRange): its last ID and entries-read move on.
  void NoteDelivered(StreamGroup* g, StreamId id) const;
  const StreamState& state() const { return st_; }

  // Whole values (stream_whole.cc): every node in master-ID order; a node and its entries
  // written as given (the caller keeps the state: nodes, tail, length).
  Status ListNodes(std::vector<StreamNode>* out);
  void PutNode(const StreamNode& n, std::span<const StreamEntry> entries);

 private:
  explicit Stream(Collection c) : c_(std::move(c)) {}
  // stream-node-max-bytes / -entries as the store had them when the stream was opened, with
  // Redis's meaning of 0 (bytes: 1 GB; entries: no limit).
  int64_t node_max_bytes_ = 4096;
  int64_t node_max_entries_ = 100;
  Status LoadNode(StreamId first, StreamNode* out);  // Corruption when absent
  // The node whose first ID is `first`, if one is stored.
  Status FindNode(StreamId first, StreamNode* out, bool* found);
  void SaveNode(const StreamNode& n);
  void EraseNode(const StreamNode& n);
  // The node holding `id` (the last node whose first ID is <= id); found false when none.
  Status NodeOf(StreamId id, StreamNode* out, bool* found);
  Status FirstNode(StreamNode* out, bool* found);
  Status FirstElementFrom(char tag, std::string_view from, StreamId* id, bool* found);
  Status RefreshTail();
  Status EraseEntriesOf(const StreamNode& n);
  Status Scan(std::string_view prefix, std::string_view from, bool rev,
              const std::function<bool(std::string_view, std::string_view)>& visit);
  Status ErasePrefix(std::string_view prefix);
  void UpdateFirstId();

  Collection c_;
  StreamState st_;
  std::string key_;
};

// The stream at `s` as plain data (sluice/stream_whole.h), and a new stream written from one
// (`s` must not exist yet; the caller creates nothing). stream_whole.cc.
Status ReadStreamWhole(Stream& s, StreamWhole* out);
Status WriteStreamWhole(Stream& s, const StreamWhole& in);

}  // namespace sluice::internal
