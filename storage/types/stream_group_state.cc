// The stream layout's consumer groups (stream.h): group records, the group's pending entries
// list (PEL), consumers and each consumer's own PEL, plus Redis 7.0's entries-read and lag rules.
#include <utility>

#include "store_impl.h"
#include "stream.h"
#include "txn.h"

namespace sluice::internal {

namespace {

void AppendBE32(std::string* out, uint32_t v) {
  for (int i = 3; i >= 0; --i) out->push_back(static_cast<char>(v >> (8 * i)));
}

std::string Named(char tag, std::string_view group) {
  std::string k(1, tag);
  AppendBE32(&k, static_cast<uint32_t>(group.size()));
  k.append(group);
  return k;
}
std::string GroupKey(std::string_view name) { return std::string(1, 'g').append(name); }
std::string PelPrefix(std::string_view group) { return Named('p', group); }
std::string ConsumerPrefix(std::string_view group) { return Named('c', group); }
std::string ConsumerPelPrefix(std::string_view group, std::string_view consumer) {
  std::string k = Named('q', group);
  AppendBE32(&k, static_cast<uint32_t>(consumer.size()));
  k.append(consumer);
  return k;
}
std::string WithId(std::string prefix, StreamId id) {
  AppendStreamId(&prefix, id);
  return prefix;
}

int64_t Fixed(std::string_view v, size_t at) {
  return static_cast<int64_t>(DecodeFixed64(v.data() + at));
}

}  // namespace

// Visits the sub-keys starting with `prefix`, from prefix + `from` (backwards from there when
// rev), passing the element bytes after the prefix and the value, while visit returns true.
Status Stream::Scan(std::string_view prefix, std::string_view from, bool rev,
                    const std::function<bool(std::string_view, std::string_view)>& visit) {
  auto it = c_.NewIterator(ElementCf::kStream, prefix);
  const std::string start = c_.SubKey(std::string(prefix).append(from));
  if (rev) {
    it->SeekForPrev(start);
  } else {
    it->Seek(start);
  }
  for (; it->Valid(); rev ? it->Prev() : it->Next()) {
    std::string_view el = c_.ElementOf(it->key());
    if (el.substr(0, prefix.size()) != prefix) break;
    if (!visit(el.substr(prefix.size()), it->value().ToStringView())) break;
  }
  return it->status().ok() ? Status::Ok() : Status::IOError(it->status().ToString());
}

Status Stream::GetGroup(std::string_view name, StreamGroup* out, bool* found) {
  std::string v;
  if (Status s = c_.Get(ElementCf::kStream, GroupKey(name), &v, found); !s.ok() || !*found) {
    return s;
  }
  if (v.size() < 40) return Status::Corruption("invalid stream group");
  out->last_id = ReadStreamId(v);
  out->entries_read = Fixed(v, 16);
  out->pending = Fixed(v, 24);
  out->consumers = Fixed(v, 32);
  // Records written before the watermark end at 40 bytes (builds before it ignore the rest).
  out->pel_max = v.size() >= 56 ? ReadStreamId(v.substr(40)) : StreamId::Max();
  out->pel_min = v.size() >= 72 ? ReadStreamId(v.substr(56)) : StreamId{};
  return Status::Ok();
}

void Stream::PutGroup(std::string_view name, const StreamGroup& g) {
  std::string v;
  AppendStreamId(&v, g.last_id);
  AppendFixed64(&v, static_cast<uint64_t>(g.entries_read));
  AppendFixed64(&v, static_cast<uint64_t>(g.pending));
  AppendFixed64(&v, static_cast<uint64_t>(g.consumers));
  AppendStreamId(&v, g.pel_max);
  AppendStreamId(&v, g.pel_min);
  c_.PutRewritable(ElementCf::kStream, GroupKey(name), v);
}

Status Stream::ListGroups(std::vector<std::pair<std::string, StreamGroup>>* out) {
  std::vector<std::string> names;
  Status s = Scan("g", "", false, [&](std::string_view name, std::string_view) {
    names.emplace_back(name);
    return true;
  });
  if (!s.ok()) return s;
  for (auto& n : names) {
    StreamGroup g;
    bool found = false;
    if (Status e = GetGroup(n, &g, &found); !e.ok()) return e;
    out->emplace_back(std::move(n), g);
  }
  return Status::Ok();
}

// Erases every sub-key under `prefix` (a group's PEL, its consumers, a consumer's PEL).
Status Stream::ErasePrefix(std::string_view prefix) {
  std::vector<std::string> keys;
  Status s = Scan(prefix, "", false, [&](std::string_view rest, std::string_view) {
    keys.push_back(std::string(prefix).append(rest));
    return true;
  });
  if (!s.ok()) return s;
  for (const auto& k : keys) c_.Erase(ElementCf::kStream, k);
  return Status::Ok();
}

Status Stream::DestroyGroup(std::string_view name) {
  std::vector<std::pair<std::string, StreamConsumer>> consumers;
  if (Status s = ListConsumers(name, &consumers); !s.ok()) return s;
  for (const auto& [consumer, _] : consumers) {
    if (Status s = ErasePrefix(ConsumerPelPrefix(name, consumer)); !s.ok()) return s;
  }
  if (Status s = ErasePrefix(ConsumerPrefix(name)); !s.ok()) return s;
  if (Status s = ErasePrefix(PelPrefix(name)); !s.ok()) return s;
  c_.Erase(ElementCf::kStream, GroupKey(name));
  st_.groups -= 1;
  return Status::Ok();
}

namespace {
bool DecodePending(std::string_view v, StreamPending* out) {
  if (v.size() < 16) return false;
  out->delivery_ms = Fixed(v, 0);
  out->delivery_count = Fixed(v, 8);
  out->consumer.assign(v.substr(16));
  return true;
}
}  // namespace

Status Stream::GetPending(std::string_view group, StreamId id, StreamPending* out, bool* found) {
  std::string v;
  Status s = c_.Get(ElementCf::kStream, WithId(PelPrefix(group), id), &v, found);
  if (!s.ok() || !*found) return s;
  return DecodePending(v, out) ? Status::Ok() : Status::Corruption("invalid pending entry");
}

void Stream::PutPending(std::string_view group, StreamId id, const StreamPending& p) {
  std::string v;
  AppendFixed64(&v, static_cast<uint64_t>(p.delivery_ms));
  AppendFixed64(&v, static_cast<uint64_t>(p.delivery_count));
  v.append(p.consumer);
  c_.Put(ElementCf::kStream, WithId(PelPrefix(group), id), v);
  c_.Put(ElementCf::kStream, WithId(ConsumerPelPrefix(group, p.consumer), id), "");
}

void Stream::ErasePending(std::string_view group, StreamId id, std::string_view consumer) {
  c_.Erase(ElementCf::kStream, WithId(PelPrefix(group), id));
  c_.Erase(ElementCf::kStream, WithId(ConsumerPelPrefix(group, consumer), id));
}

Status Stream::ListPending(std::string_view group, const StreamGroup& g,
                           const std::string* consumer, StreamId start, StreamId end, int64_t count,
                           std::vector<std::pair<StreamId, StreamPending>>* out) {
  std::string from;
  AppendStreamId(&from, std::max(start, g.pel_min));
  std::vector<StreamId> ids;
  const std::string prefix =
      consumer != nullptr ? ConsumerPelPrefix(group, *consumer) : PelPrefix(group);
  Status s = Scan(prefix, from, false, [&](std::string_view rest, std::string_view value) {
    if (rest.size() != 16) return true;
    const StreamId id = ReadStreamId(rest);
    if (id > end) return false;
    if (consumer != nullptr) {
      ids.push_back(id);
    } else {
      StreamPending p;
      if (DecodePending(value, &p)) out->emplace_back(id, std::move(p));
    }
    return count == 0 || static_cast<int64_t>(ids.size() + out->size()) < count;
  });
  if (!s.ok()) return s;
  for (StreamId id : ids) {  // a consumer's PEL names the IDs; the group's PEL has the rest
    StreamPending p;
    bool found = false;
    if (Status e = GetPending(group, id, &p, &found); !e.ok()) return e;
    if (found) out->emplace_back(id, std::move(p));
  }
  return Status::Ok();
}

Status Stream::PendingEdges(std::string_view group, const StreamGroup& g, StreamId* first,
                            StreamId* last) {
  const std::string prefix = PelPrefix(group);
  std::string start;
  AppendStreamId(&start, g.pel_min);
  auto edge = [&](bool rev, StreamId* out) {
    return Scan(prefix, rev ? std::string(17, '\xff') : start, rev,
                [&](std::string_view rest, std::string_view) {
                  if (rest.size() == 16) *out = ReadStreamId(rest);
                  return false;
                });
  };
  if (Status s = edge(false, first); !s.ok()) return s;
  return edge(true, last);
}

Status Stream::GetConsumer(std::string_view group, std::string_view name, StreamConsumer* out,
                           bool* found) {
  std::string v;
  Status s = c_.Get(ElementCf::kStream, std::string(ConsumerPrefix(group)).append(name), &v, found);
  if (!s.ok() || !*found) return s;
  if (v.size() < 16) return Status::Corruption("invalid stream consumer");
  out->seen_ms = Fixed(v, 0);
  out->pending = Fixed(v, 8);
  return Status::Ok();
}

void Stream::PutConsumer(std::string_view group, std::string_view name, const StreamConsumer& c) {
  std::string v;
  AppendFixed64(&v, static_cast<uint64_t>(c.seen_ms));
  AppendFixed64(&v, static_cast<uint64_t>(c.pending));
  c_.PutRewritable(ElementCf::kStream, std::string(ConsumerPrefix(group)).append(name), v);
}

Status Stream::ListConsumers(std::string_view group,
                             std::vector<std::pair<std::string, StreamConsumer>>* out) {
  return Scan(ConsumerPrefix(group), "", false, [&](std::string_view name, std::string_view v) {
    if (v.size() >= 16)
      out->emplace_back(std::string(name), StreamConsumer{Fixed(v, 0), Fixed(v, 8)});
    return true;
  });
}

Result<int64_t> Stream::DeleteConsumer(std::string_view group, std::string_view name,
                                       StreamGroup* g) {
  StreamConsumer c;
  bool found = false;
  if (Status s = GetConsumer(group, name, &c, &found); !s.ok()) return s;
  if (!found) return int64_t{0};
  std::vector<std::pair<StreamId, StreamPending>> pel;
  const std::string owner(name);
  if (Status s = ListPending(group, *g, &owner, StreamId{}, StreamId::Max(), 0, &pel); !s.ok()) {
    return s;
  }
  for (const auto& [id, p] : pel) ErasePending(group, id, name);
  g->pending -= static_cast<int64_t>(pel.size());
  if (g->pending == 0) g->pel_min = StreamId::Max();
  g->consumers -= 1;
  c_.Erase(ElementCf::kStream, std::string(ConsumerPrefix(group)).append(name));
  return static_cast<int64_t>(pel.size());
}

// ---- Redis 7.0's read counters

bool Stream::HasTombstonesFrom(StreamId start) const {
  if (st_.length == 0 || st_.max_deleted_id.IsZero()) return false;
  if (st_.first_id > st_.max_deleted_id) return false;
  return start <= st_.max_deleted_id;
}

int64_t Stream::EstimateEntriesRead(StreamId id) const {
  const auto added = static_cast<int64_t>(st_.entries_added);
  if (st_.entries_added == 0) return 0;
  if (st_.length == 0 && id <= st_.last_id) return added;
  if (id == st_.last_id) return added;
  if (id > st_.last_id) return -1;
  if (st_.max_deleted_id.IsZero() || st_.max_deleted_id < st_.first_id) {
    if (id < st_.first_id) return added - st_.length;
    if (id == st_.first_id) return added - st_.length + 1;
  }
  return -1;
}

std::optional<int64_t> Stream::Lag(const StreamGroup& g) const {
  if (st_.entries_added == 0) return 0;
  const auto added = static_cast<int64_t>(st_.entries_added);
  if (g.entries_read != -1 && !HasTombstonesFrom(g.last_id)) return added - g.entries_read;
  const int64_t read = EstimateEntriesRead(g.last_id);
  if (read == -1) return std::nullopt;
  return added - read;
}

void Stream::NoteDelivered(StreamGroup* g, StreamId id) const {
  if (id <= g->last_id) return;
  if (g->entries_read != -1 && !HasTombstonesFrom(id)) {
    g->entries_read += 1;
  } else if (st_.entries_added != 0) {
    g->entries_read = EstimateEntriesRead(id);
  }
  g->last_id = id;
}

}  // namespace sluice::internal
