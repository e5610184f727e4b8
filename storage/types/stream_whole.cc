// A stream key as plain data and back (sluice/stream_whole.h): what DUMP/RESTORE, MIGRATE, RDB
// files and full sync move. Nodes keep Redis's boundaries and accounting, so a stream restored
// from Redis grows (XADD) into the nodes Redis would have made.
#include <algorithm>
#include <utility>

#include "store_impl.h"
#include "stream.h"
#include "txn.h"

namespace sluice::internal {

namespace {

Status ReadGroups(Stream& s, StreamWhole* out) {
  std::vector<std::pair<std::string, StreamGroup>> groups;
  if (Status e = s.ListGroups(&groups); !e.ok()) return e;
  for (auto& [name, g] : groups) {
    StreamWholeGroup w;
    w.name = std::move(name);
    w.last_id = g.last_id;
    w.entries_read = g.entries_read;
    std::vector<std::pair<StreamId, StreamPending>> pel;
    if (Status e = s.ListPending(w.name, g, nullptr, StreamId{}, StreamId::Max(), 0, &pel);
        !e.ok()) {
      return e;
    }
    for (auto& [id, p] : pel) {
      w.pending.push_back({id, p.delivery_ms, p.delivery_count, std::move(p.consumer)});
    }
    std::vector<std::pair<std::string, StreamConsumer>> consumers;
    if (Status e = s.ListConsumers(w.name, &consumers); !e.ok()) return e;
    for (auto& [cname, c] : consumers) {
      w.consumers.push_back({std::move(cname), c.seen_ms});
    }
    out->groups.push_back(std::move(w));
  }
  return Status::Ok();
}

void WriteGroup(Stream& s, const StreamWholeGroup& g) {
  std::vector<std::pair<std::string_view, int64_t>> owned;  // consumer -> pending count
  for (const StreamWholeConsumer& c : g.consumers) owned.emplace_back(c.name, 0);
  for (const StreamWholePending& p : g.pending) {
    s.PutPending(g.name, p.id, {p.delivery_ms, p.delivery_count, p.consumer});
    for (auto& [name, n] : owned) n += name == p.consumer ? 1 : 0;
  }
  for (size_t i = 0; i < g.consumers.size(); ++i) {
    s.PutConsumer(g.name, g.consumers[i].name, {g.consumers[i].seen_ms, owned[i].second});
  }
  StreamGroup group{.last_id = g.last_id,
                    .entries_read = g.entries_read,
                    .pending = static_cast<int64_t>(g.pending.size()),
                    .consumers = static_cast<int64_t>(g.consumers.size()),
                    .pel_max = StreamId{},
                    .pel_min = StreamId::Max()};
  for (const StreamWholePending& p : g.pending) {
    group.pel_max = std::max(group.pel_max, p.id);
    group.pel_min = std::min(group.pel_min, p.id);
  }
  s.PutGroup(g.name, group);
}

}  // namespace

Status ReadStreamWhole(Stream& s, StreamWhole* out) {
  const StreamState& st = s.state();
  *out = StreamWhole{};
  out->length = st.length;
  out->last_id = st.last_id;
  out->first_id = st.first_id;
  out->max_deleted_id = st.max_deleted_id;
  out->entries_added = st.entries_added;
  std::vector<StreamNode> nodes;
  if (Status e = s.ListNodes(&nodes); !e.ok()) return e;
  for (StreamNode& n : nodes) {
    StreamWholeNode w;
    w.master = n.first;
    w.master_fields = std::move(n.master_fields);
    w.deleted = n.deleted;
    w.bytes = n.bytes;
    if (Status e = s.Range(n.first, n.last, false, 0, &w.entries); !e.ok()) return e;
    if (!w.entries.empty()) out->nodes.push_back(std::move(w));
  }
  return ReadGroups(s, out);
}

Status WriteStreamWhole(Stream& s, const StreamWhole& in) {
  if (s.exists()) return Status::InvalidArgument("the stream key exists");
  s.Create();
  StreamState& st = s.state();
  st.length = in.length;
  st.last_id = in.last_id;
  st.first_id = in.first_id;
  st.max_deleted_id = in.max_deleted_id;
  st.entries_added = in.entries_added;
  st.groups = static_cast<int64_t>(in.groups.size());
  for (const StreamWholeNode& n : in.nodes) {
    if (n.entries.empty()) continue;
    StreamNode node{
        n.master, n.entries.back().id, static_cast<int64_t>(n.entries.size()), n.deleted,
        n.bytes,  n.master_fields};
    s.PutNode(node, n.entries);
    st.nodes += 1;
    st.has_tail = true;
    st.tail_first = n.master;
  }
  // A payload whose first ID is above its first entry (damaged, or written by another tool)
  // would break first_id's invariant (stream.h).
  for (const StreamWholeNode& n : in.nodes) {
    if (n.entries.empty()) continue;
    if (n.entries.front().id < st.first_id) st.first_id = n.entries.front().id;
    break;
  }
  for (const StreamWholeGroup& g : in.groups) WriteGroup(s, g);
  s.Save();
  return Status::Ok();
}

}  // namespace sluice::internal
