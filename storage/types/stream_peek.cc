// Point reads of one consumer group's state: sluice/stream_peek.h.
#include "sluice/stream_peek.h"

#include <utility>

#include "stream.h"
#include "txn.h"

namespace sluice {

using internal::Stream;

Result<StreamGroupPeek> PeekStreamGroup(Store::Transaction& unit, int db, std::string_view key,
                                        std::string_view group,
                                        std::optional<std::string_view> consumer) {
  StreamGroupPeek out;
  auto s = Stream::Open(unit.txn(), db, key, /*write=*/false);
  if (!s.ok()) {
    if (s.status().code() == Code::kWrongType) return out;
    return s.status();
  }
  if (!s->exists()) return out;
  internal::StreamGroup g;
  if (Status e = s->GetGroup(group, &g, &out.found); !e.ok()) return e;
  if (!out.found) return out;
  out.last_delivered = g.last_id;
  out.entries_read = g.entries_read;
  if (consumer) {
    internal::StreamConsumer c;
    if (Status e = s->GetConsumer(group, *consumer, &c, &out.consumer_found); !e.ok()) return e;
  }
  return out;
}

Result<std::optional<StreamPendingEntry>> PeekStreamPending(Store::Transaction& unit, int db,
                                                            std::string_view key,
                                                            std::string_view group, StreamId id) {
  auto s = Stream::Open(unit.txn(), db, key, /*write=*/false);
  if (!s.ok()) {
    if (s.status().code() == Code::kWrongType) return std::optional<StreamPendingEntry>();
    return s.status();
  }
  if (!s->exists()) return std::optional<StreamPendingEntry>();
  internal::StreamPending p;
  bool found = false;
  if (Status e = s->GetPending(group, id, &p, &found); !e.ok()) return e;
  if (!found) return std::optional<StreamPendingEntry>();
  return std::optional<StreamPendingEntry>(
      StreamPendingEntry{id, std::move(p.consumer), p.delivery_ms, p.delivery_count});
}

}  // namespace sluice
