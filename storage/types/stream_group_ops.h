// What the consumer-group operations (stream_groups.cc, stream_claims.cc) share: a stream
// opened with one of its groups, and the consumers a command touches, written back once.
// Internal header.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "stream.h"

namespace sluice::internal {

// A stream and one of its groups, both existing (the server probed them first).
struct GroupUnit {
  GroupUnit(Stream s, std::string n) : stream(std::move(s)), name(std::move(n)) {}
  Stream stream;
  std::string name;
  StreamGroup group;

  // `change` (may be null) then records what the unit does to the group (sluice/stream.h).
  static Result<GroupUnit> Open(Txn& txn, int db, std::string_view key, std::string_view group,
                                bool write, StreamGroupChange* change = nullptr);
  // The consumer, created when missing (seen now); `refresh` sets its seen time to now (Redis's
  // SLC_DEFAULT lookups).
  Result<StreamConsumer*> Consumer(std::string_view name, int64_t now_ms, bool refresh);
  // Makes `owner` the pending entry's consumer, moving it from its old one (pending counts
  // follow). `p` is the entry as stored (consumer empty: a new entry), then as written.
  Status Assign(StreamId id, StreamPending* p, std::string_view owner, bool is_new);
  // Writes the pending entry `p` (already in the PEL, same owner) back: a history re-delivery.
  void Redeliver(StreamId id, const StreamPending& p);
  Status Ack(StreamId id, const StreamPending& p);
  // Whether Consumer made `name` in this unit.
  bool Created(std::string_view name) const;
  // Writes the group, the touched consumers and the stream's metadata.
  void Save();

 private:
  void NotePending(StreamId id, const StreamPending& p);

  std::map<std::string, StreamConsumer, std::less<>> consumers_;
  std::vector<std::string> created_;  // consumers Consumer made (rarely more than one)
  StreamGroupChange* change_ = nullptr;
  StreamId last_id_before_;
  int64_t entries_read_before_ = -1;
};

}  // namespace sluice::internal
