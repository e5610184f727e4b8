// A group's pending entries (Redis 7.0 semantics): XPENDING's summary and ranges, XCLAIM and
// XAUTOCLAIM. Point reads and writes of the PEL: O(log n) per entry touched.
#include <utility>

#include "sluice/transaction.h"
#include "store_impl.h"
#include "stream_group_ops.h"
#include "txn.h"

namespace sluice {

using internal::GroupUnit;
using internal::StreamPending;

Result<StreamPendingSummary> Store::Transaction::XPendingSummary(int db, std::string_view key,
                                                                 std::string_view group) {
  auto u = GroupUnit::Open(*txn_, db, key, group, /*write=*/false);
  if (!u.ok()) return u.status();
  StreamPendingSummary out;
  out.count = u->group.pending;
  if (out.count == 0) return out;
  if (Status e = u->stream.PendingEdges(group, u->group, &out.first, &out.last); !e.ok()) {
    return e;
  }
  std::vector<std::pair<std::string, internal::StreamConsumer>> consumers;
  if (Status e = u->stream.ListConsumers(group, &consumers); !e.ok()) return e;
  for (auto& [name, c] : consumers) {
    if (c.pending > 0) out.consumers.emplace_back(std::move(name), c.pending);
  }
  return out;
}

Result<std::vector<StreamPendingEntry>> Store::Transaction::XPendingRange(
    int db, std::string_view key, std::string_view group, int64_t min_idle_ms, StreamId start,
    StreamId end, int64_t count, std::optional<std::string_view> consumer) {
  auto u = GroupUnit::Open(*txn_, db, key, group, /*write=*/false);
  if (!u.ok()) return u.status();
  std::vector<StreamPendingEntry> out;
  if (count <= 0 || start > end) return out;
  const std::string owner(consumer.value_or(""));
  std::vector<std::pair<StreamId, StreamPending>> pel;
  // IDLE filters after the range is read, so read it whole when filtering.
  Status e = u->stream.ListPending(group, u->group, consumer ? &owner : nullptr, start, end,
                                   min_idle_ms > 0 ? 0 : count, &pel);
  if (!e.ok()) return e;
  const int64_t now = NowMs();
  for (auto& [id, p] : pel) {
    if (min_idle_ms > 0 && now - p.delivery_ms < min_idle_ms) continue;
    out.push_back(StreamPendingEntry{id, std::move(p.consumer), p.delivery_ms, p.delivery_count});
    if (static_cast<int64_t>(out.size()) == count) break;
  }
  return out;
}

namespace {

// Claims one pending entry for `consumer` (Redis's XCLAIM/XAUTOCLAIM step), appending what the
// reply shows. The entry exists.
Status ClaimOne(GroupUnit& u, StreamId id, StreamPending* p, bool is_new, std::string_view consumer,
                int64_t delivery_ms, int64_t retry_count, bool justid, int64_t now,
                StreamClaimReply* out) {
  auto c = u.Consumer(consumer, now, /*refresh=*/true);
  if (!c.ok()) return c.status();
  p->delivery_ms = delivery_ms;
  if (retry_count >= 0) {
    p->delivery_count = retry_count;
  } else if (!justid) {
    p->delivery_count += 1;
  }
  if (Status e = u.Assign(id, p, consumer, is_new); !e.ok()) return e;
  StreamEntry entry{.id = id, .fields = {}};
  if (!justid) {
    bool found = false;
    if (Status e = u.stream.GetEntry(id, &entry, &found); !e.ok()) return e;
  }
  out->claimed.push_back(std::move(entry));
  return Status::Ok();
}

}  // namespace

Result<StreamClaimReply> Store::Transaction::XClaim(
    int db, std::string_view key, std::string_view group, std::string_view consumer,
    std::span<const StreamId> ids, const StreamClaimOptions& o, StreamGroupChange* change) {
  auto u = GroupUnit::Open(*txn_, db, key, group, /*write=*/true, change);
  if (!u.ok()) return u.status();
  const int64_t now = NowMs();
  if (o.last_id > u->group.last_id) u->group.last_id = o.last_id;
  int64_t delivery = o.delivery_ms.value_or(now);
  if (delivery < 0 || delivery > now) delivery = now;
  StreamClaimReply out;
  for (StreamId id : ids) {
    StreamPending p;
    bool pending = false;
    if (Status e = u->stream.GetPending(group, id, &p, &pending); !e.ok()) return e;
    StreamEntry probe;
    bool exists = false;
    if (Status e = u->stream.GetEntry(id, &probe, &exists); !e.ok()) return e;
    if (!exists) {  // a pending entry whose entry is gone leaves the PEL
      if (pending) {
        if (Status e = u->Ack(id, p); !e.ok()) return e;
        out.deleted.push_back(id);
      }
      continue;
    }
    const bool is_new = !pending;
    if (is_new && !o.force) continue;
    if (!is_new && o.min_idle_ms > 0 && now - p.delivery_ms < o.min_idle_ms) continue;
    if (is_new) p = StreamPending{.delivery_ms = now, .delivery_count = 1, .consumer = {}};
    Status e = ClaimOne(*u, id, &p, is_new, consumer, delivery, o.retry_count, o.justid, now, &out);
    if (!e.ok()) return e;
  }
  u->Save();
  if (change != nullptr) change->consumer_created = u->Created(consumer);
  return out;
}

Result<StreamClaimReply> Store::Transaction::XAutoClaim(
    int db, std::string_view key, std::string_view group, std::string_view consumer,
    int64_t min_idle_ms, StreamId start, int64_t count, bool justid, StreamGroupChange* change) {
  auto u = GroupUnit::Open(*txn_, db, key, group, /*write=*/true, change);
  if (!u.ok()) return u.status();
  const int64_t now = NowMs();
  int64_t attempts = count * 10;  // Redis's attempts factor
  std::vector<std::pair<StreamId, StreamPending>> pel;
  // One more than the attempts: the entry after the last one examined is the next cursor.
  Status e =
      u->stream.ListPending(group, u->group, nullptr, start, StreamId::Max(), attempts + 1, &pel);
  if (!e.ok()) return e;
  // Walked from the floor: what it found first is the PEL's first entry (acknowledgements out of
  // order leave the floor below it, on IDs already gone).
  if (start <= u->group.pel_min && !pel.empty()) u->group.pel_min = pel.front().first;
  StreamClaimReply out;
  size_t i = 0;
  for (; i < pel.size() && attempts > 0 && count > 0; ++i, --attempts) {
    auto& [id, p] = pel[i];
    StreamEntry probe;
    bool exists = false;
    if (Status g = u->stream.GetEntry(id, &probe, &exists); !g.ok()) return g;
    if (!exists) {
      if (Status a = u->Ack(id, p); !a.ok()) return a;
      out.deleted.push_back(id);
      --count;
      continue;
    }
    if (min_idle_ms > 0 && now - p.delivery_ms < min_idle_ms) continue;
    Status c = ClaimOne(*u, id, &p, /*is_new=*/false, consumer, now, -1, justid, now, &out);
    if (!c.ok()) return c;
    --count;
  }
  out.next = i < pel.size() ? pel[i].first : StreamId{};
  u->Save();
  if (change != nullptr) change->consumer_created = u->Created(consumer);
  return out;
}

}  // namespace sluice
