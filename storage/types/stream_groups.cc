// Consumer groups (Redis 7.0 semantics) over the stream layout: XGROUP's subcommands,
// XREADGROUP, XACK, XINFO GROUPS and CONSUMERS. stream_claims.cc has XPENDING and the claims.
#include <algorithm>
#include <utility>

#include "sluice/transaction.h"
#include "store_impl.h"
#include "stream_group_ops.h"
#include "txn.h"

namespace sluice {

namespace internal {

Result<GroupUnit> GroupUnit::Open(Txn& txn, int db, std::string_view key, std::string_view group,
                                  bool write, StreamGroupChange* change) {
  auto s = Stream::Open(txn, db, key, write);
  if (!s.ok()) return s.status();
  GroupUnit u(std::move(*s), std::string(group));
  bool found = false;
  if (!u.stream.exists()) return Status::NoSuchKey();
  if (Status e = u.stream.GetGroup(group, &u.group, &found); !e.ok()) return e;
  if (!found) return Status::NoSuchKey();
  u.change_ = change;
  u.last_id_before_ = u.group.last_id;
  u.entries_read_before_ = u.group.entries_read;
  return u;
}

Result<StreamConsumer*> GroupUnit::Consumer(std::string_view name, int64_t now_ms, bool refresh) {
  auto it = consumers_.find(name);
  if (it == consumers_.end()) {
    StreamConsumer c;
    bool found = false;
    if (Status s = stream.GetConsumer(this->name, name, &c, &found); !s.ok()) return s;
    if (!found) {
      c = StreamConsumer{.seen_ms = now_ms, .pending = 0};
      group.consumers += 1;
      created_.emplace_back(name);
    }
    it = consumers_.emplace(std::string(name), c).first;
  }
  if (refresh) it->second.seen_ms = now_ms;
  return &it->second;
}

bool GroupUnit::Created(std::string_view name) const {
  for (const std::string& c : created_) {
    if (c == name) return true;
  }
  return false;
}

void GroupUnit::NotePending(StreamId id, const StreamPending& p) {
  if (change_ == nullptr) return;
  change_->pending.push_back(StreamPendingEntry{id, p.consumer, p.delivery_ms, p.delivery_count});
}

Status GroupUnit::Assign(StreamId id, StreamPending* p, std::string_view owner, bool is_new) {
  if (is_new) {
    group.pending += 1;
    if (group.pel_max != StreamId::Max()) group.pel_max = std::max(group.pel_max, id);
    group.pel_min = std::min(group.pel_min, id);
  } else if (p->consumer != owner) {
    auto old = Consumer(p->consumer, 0, /*refresh=*/false);
    if (!old.ok()) return old.status();
    (*old)->pending -= 1;
    stream.ErasePending(name, id, p->consumer);
  }
  if (is_new || p->consumer != owner) {
    auto target = Consumer(owner, 0, /*refresh=*/false);
    if (!target.ok()) return target.status();
    (*target)->pending += 1;
  }
  p->consumer.assign(owner);
  stream.PutPending(name, id, *p);
  NotePending(id, *p);
  return Status::Ok();
}

void GroupUnit::Redeliver(StreamId id, const StreamPending& p) {
  stream.PutPending(name, id, p);
  NotePending(id, p);
}

Status GroupUnit::Ack(StreamId id, const StreamPending& p) {
  auto owner = Consumer(p.consumer, 0, /*refresh=*/false);
  if (!owner.ok()) return owner.status();
  (*owner)->pending -= 1;
  group.pending -= 1;
  if (group.pending == 0) {
    group.pel_min = StreamId::Max();
  } else if (id == group.pel_min) {
    group.pel_min.Increment();  // every other pending ID is above it
  }
  stream.ErasePending(name, id, p.consumer);
  return Status::Ok();
}

void GroupUnit::Save() {
  for (const auto& [n, c] : consumers_) stream.PutConsumer(name, n, c);
  stream.PutGroup(name, group);
  // Group operations change the group's records, never the stream's state (StreamState): its
  // metadata is not staged again (an encode and a write per XREADGROUP and XACK).
  stream.Touch();
  if (change_ != nullptr) {
    change_->last_delivered = group.last_id;
    change_->entries_read = group.entries_read;
    change_->group_moved =
        group.last_id != last_id_before_ || group.entries_read != entries_read_before_;
  }
}

}  // namespace internal

using internal::GroupUnit;
using internal::Stream;

Result<StreamGroupProbe> Store::Transaction::XGroupProbe(int db, std::string_view key,
                                                         std::string_view group) {
  auto s = Stream::Open(*txn_, db, key, /*write=*/false);
  if (!s.ok()) return s.status();
  if (!s->exists()) return StreamGroupProbe::kNoKey;
  internal::StreamGroup g;
  bool found = false;
  if (Status e = s->GetGroup(group, &g, &found); !e.ok()) return e;
  return found ? StreamGroupProbe::kFound : StreamGroupProbe::kNoGroup;
}

Result<StreamError> Store::Transaction::XGroupCreate(int db, std::string_view key,
                                                     std::string_view group,
                                                     std::optional<StreamId> id, bool mkstream,
                                                     int64_t entries_read) {
  auto s = Stream::Open(*txn_, db, key, /*write=*/true);
  if (!s.ok()) return s.status();
  if (!s->exists() && !mkstream) return StreamError::kNoKey;
  s->Create();
  internal::StreamGroup g;
  bool found = false;
  if (Status e = s->GetGroup(group, &g, &found); !e.ok()) return e;
  if (found) {
    s->Save();  // MKSTREAM made the stream before the group was refused, as in Redis
    return StreamError::kGroupExists;
  }
  g = internal::StreamGroup{.last_id = id.value_or(s->state().last_id),
                            .entries_read = entries_read,
                            .pel_max = StreamId{},  // the PEL starts empty
                            .pel_min = StreamId::Max()};
  s->PutGroup(group, g);
  s->state().groups += 1;
  s->Save();
  return StreamError::kNone;
}

Status Store::Transaction::XGroupSetId(int db, std::string_view key, std::string_view group,
                                       std::optional<StreamId> id, int64_t entries_read) {
  auto u = GroupUnit::Open(*txn_, db, key, group, /*write=*/true);
  if (!u.ok()) return u.status();
  u->group.last_id = id.value_or(u->stream.state().last_id);
  u->group.entries_read = entries_read;
  u->Save();
  return Status::Ok();
}

Result<int64_t> Store::Transaction::XGroupDestroy(int db, std::string_view key,
                                                  std::string_view group) {
  auto s = Stream::Open(*txn_, db, key, /*write=*/true);
  if (!s.ok()) return s.status();
  internal::StreamGroup g;
  bool found = false;
  if (Status e = s->GetGroup(group, &g, &found); !e.ok() || !found) {
    if (!e.ok()) return e;
    return int64_t{0};
  }
  if (Status e = s->DestroyGroup(group); !e.ok()) return e;
  s->Save();
  return int64_t{1};
}

Result<int64_t> Store::Transaction::XGroupCreateConsumer(int db, std::string_view key,
                                                         std::string_view group,
                                                         std::string_view consumer) {
  auto u = GroupUnit::Open(*txn_, db, key, group, /*write=*/true);
  if (!u.ok()) return u.status();
  const int64_t before = u->group.consumers;
  auto c = u->Consumer(consumer, NowMs(), /*refresh=*/false);
  if (!c.ok()) return c.status();
  if (u->group.consumers == before) return int64_t{0};
  u->Save();
  return int64_t{1};
}

Result<int64_t> Store::Transaction::XGroupDelConsumer(int db, std::string_view key,
                                                      std::string_view group,
                                                      std::string_view consumer) {
  auto u = GroupUnit::Open(*txn_, db, key, group, /*write=*/true);
  if (!u.ok()) return u.status();
  const int64_t before = u->group.consumers;
  auto pending = u->stream.DeleteConsumer(group, consumer, &u->group);
  if (!pending.ok()) return pending.status();
  if (u->group.consumers != before) {
    u->stream.PutGroup(group, u->group);
    u->stream.Save();
  }
  return *pending;
}

Result<std::optional<std::vector<StreamEntry>>> Store::Transaction::XReadGroup(
    int db, std::string_view key, std::string_view group, std::string_view consumer,
    std::optional<StreamId> history_from, int64_t count, bool noack, StreamGroupChange* change) {
  using Reply = std::optional<std::vector<StreamEntry>>;
  auto u = GroupUnit::Open(*txn_, db, key, group, /*write=*/true, change);
  if (!u.ok()) return u.status();
  Stream& s = u->stream;
  const int64_t now = NowMs();
  std::vector<StreamEntry> out;
  if (!history_from) {
    // Served only when the stream has an entry after the group's last delivered ID.
    StreamId start = u->group.last_id;
    if (s.state().length == 0 || !start.Increment()) return Reply();
    if (Status e = s.Range(start, StreamId::Max(), false, count, &out); !e.ok()) return e;
    if (out.empty()) return Reply();
  }
  auto c = u->Consumer(consumer, now, /*refresh=*/true);
  if (!c.ok()) return c.status();
  if (change != nullptr) change->consumer_created = u->Created(consumer);
  if (history_from) {
    std::vector<std::pair<StreamId, internal::StreamPending>> pel;
    const std::string owner(consumer);
    // The history after the ID given, as Redis's xreadCommand serves it (the ID itself is not
    // included: XREADGROUP ... 667 after reading 667-0 gets an empty list).
    StreamId after = *history_from;
    if (after.Increment()) {
      Status e = s.ListPending(group, u->group, &owner, after, StreamId::Max(), count, &pel);
      if (!e.ok()) return e;
    }
    for (auto& [id, p] : pel) {
      StreamEntry entry;
      bool found = false;
      if (Status g = s.GetEntry(id, &entry, &found); !g.ok()) return g;
      if (found) {
        p.delivery_ms = now;
        p.delivery_count += 1;
        u->Redeliver(id, p);
      } else {
        entry.id = id;
        entry.missing = true;
      }
      out.push_back(std::move(entry));
    }
    u->Save();
    return Reply(std::move(out));
  }
  for (const auto& entry : out) {
    s.NoteDelivered(&u->group, entry.id);
    if (noack) continue;
    internal::StreamPending p;
    bool found = false;
    // Nothing above the PEL's watermark is pending: no lookup. At or below it (a forced claim
    // or an earlier delivery before XGROUP SETID moved the group back) it may be already.
    if (entry.id <= u->group.pel_max) {
      if (Status e = s.GetPending(group, entry.id, &p, &found); !e.ok()) return e;
    }
    p.delivery_ms = now;
    p.delivery_count = 1;
    if (Status e = u->Assign(entry.id, &p, consumer, !found); !e.ok()) return e;
  }
  u->Save();
  return Reply(std::move(out));
}

Result<int64_t> Store::Transaction::XAck(int db, std::string_view key, std::string_view group,
                                         std::span<const StreamId> ids) {
  auto u = GroupUnit::Open(*txn_, db, key, group, /*write=*/true);
  if (!u.ok()) return u.status();
  int64_t acked = 0;
  for (StreamId id : ids) {
    internal::StreamPending p;
    bool found = false;
    if (Status e = u->stream.GetPending(group, id, &p, &found); !e.ok()) return e;
    if (!found) continue;
    if (Status e = u->Ack(id, p); !e.ok()) return e;
    ++acked;
  }
  if (acked > 0) u->Save();
  return acked;
}

Result<std::vector<StreamGroupInfo>> Store::Transaction::XInfoGroups(int db, std::string_view key) {
  auto s = Stream::Open(*txn_, db, key, /*write=*/false);
  if (!s.ok()) return s.status();
  std::vector<std::pair<std::string, internal::StreamGroup>> groups;
  if (Status e = s->ListGroups(&groups); !e.ok()) return e;
  std::vector<StreamGroupInfo> out;
  for (auto& [name, g] : groups) {
    out.push_back(StreamGroupInfo{.name = std::move(name),
                                  .consumers = g.consumers,
                                  .pending = g.pending,
                                  .last_delivered = g.last_id,
                                  .entries_read = g.entries_read,
                                  .lag = s->Lag(g)});
  }
  return out;
}

Result<std::vector<StreamConsumerInfo>> Store::Transaction::XInfoConsumers(int db,
                                                                           std::string_view key,
                                                                           std::string_view group) {
  auto u = GroupUnit::Open(*txn_, db, key, group, /*write=*/false);
  if (!u.ok()) return u.status();
  std::vector<std::pair<std::string, internal::StreamConsumer>> consumers;
  if (Status e = u->stream.ListConsumers(group, &consumers); !e.ok()) return e;
  std::vector<StreamConsumerInfo> out;
  for (auto& [name, c] : consumers) {
    out.push_back(
        StreamConsumerInfo{.name = std::move(name), .pending = c.pending, .seen_ms = c.seen_ms});
  }
  return out;
}

}  // namespace sluice
