#include "storage/formats/rdb_stream.h"

#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

#include "storage/formats/packed.h"

namespace sluice::formats {

namespace {

// Entry flags (t_stream.c).
constexpr int64_t kFlagDeleted = 1, kFlagSameFields = 2;
constexpr uint8_t kTypeStream1 = 15, kTypeStream3 = 21;

Status Damaged(const char* what) { return Status::Corruption(what); }

void AppendId(StreamId id, std::string* out) {
  for (int i = 7; i >= 0; --i) out->push_back(static_cast<char>(id.ms >> (8 * i)));
  for (int i = 7; i >= 0; --i) out->push_back(static_cast<char>(id.seq >> (8 * i)));
}

bool ReadRawId(ByteReader& in, StreamId* id) {
  return in.ReadBigEndian(8, &id->ms) && in.ReadBigEndian(8, &id->seq);
}

bool ReadLenId(ByteReader& in, StreamId* id) {
  return ReadLength(in, &id->ms) && ReadLength(in, &id->seq);
}

bool ReadMs(ByteReader& in, int64_t* ms) {
  uint64_t raw = 0;
  if (!in.ReadLittleEndian(8, &raw)) return false;
  *ms = static_cast<int64_t>(raw);
  return true;
}

// The entries of one node's listpack, read in order.
class NodeCursor {
 public:
  explicit NodeCursor(std::vector<std::string> items) : items_(std::move(items)) {}
  bool done() const { return at_ == items_.size(); }
  bool Int(int64_t* v) { return at_ < items_.size() && ParseCanonicalInt(items_[at_++], v); }
  bool Str(std::string* s) {
    if (at_ >= items_.size()) return false;
    *s = std::move(items_[at_++]);
    return true;
  }

 private:
  std::vector<std::string> items_;
  size_t at_ = 0;
};

// One entry after the master entry; *deleted when it is a tombstone (then *e holds its ID only).
bool ReadEntry(NodeCursor& c, const StreamWholeNode& node, StreamEntry* e, bool* deleted) {
  int64_t flags = 0, ms_diff = 0, seq_diff = 0, lp_count = 0;
  if (!c.Int(&flags) || !c.Int(&ms_diff) || !c.Int(&seq_diff)) return false;
  e->id = {node.master.ms + static_cast<uint64_t>(ms_diff),
           node.master.seq + static_cast<uint64_t>(seq_diff)};
  *deleted = (flags & kFlagDeleted) != 0;
  const bool same = (flags & kFlagSameFields) != 0;
  int64_t pairs = static_cast<int64_t>(node.master_fields.size());
  if (!same && (!c.Int(&pairs) || pairs < 0)) return false;
  e->fields.clear();
  for (int64_t i = 0; i < pairs; ++i) {
    std::string field, value;
    if (same) {
      field = node.master_fields[static_cast<size_t>(i)];
    } else if (!c.Str(&field)) {
      return false;
    }
    if (!c.Str(&value)) return false;
    e->fields.push_back(std::move(field));
    e->fields.push_back(std::move(value));
  }
  return c.Int(&lp_count) && lp_count == pairs + 3 + (same ? 0 : pairs + 1);
}

// A node: its master entry, then its entries (tombstones counted, not kept). *previous is the
// last ID seen so far in the stream (IDs must grow across nodes).
Status ReadNode(std::string_view master_key, std::string lp, StreamId* previous, bool* any,
                StreamWholeNode* node) {
  ByteReader key(master_key);
  if (master_key.size() != 16 || !ReadRawId(key, &node->master)) {
    return Damaged("stream node key is not a stream ID");
  }
  if (*any && node->master <= *previous) return Damaged("stream nodes out of order");
  std::vector<std::string> items;
  if (!DecodeListpack(lp, &items)) return Damaged("bad stream listpack");
  node->bytes = static_cast<int64_t>(lp.size());
  NodeCursor c(std::move(items));
  int64_t count = 0, deleted = 0, fields = 0, zero = -1;
  if (!c.Int(&count) || !c.Int(&deleted) || !c.Int(&fields) || count < 0 || deleted < 0 ||
      fields < 0) {
    return Damaged("bad stream master entry");
  }
  for (int64_t i = 0; i < fields; ++i) {
    std::string f;
    if (!c.Str(&f)) return Damaged("bad stream master entry");
    node->master_fields.push_back(std::move(f));
  }
  if (!c.Int(&zero) || zero != 0) return Damaged("bad stream master entry");
  int64_t live = 0, tombstones = 0;
  while (!c.done()) {
    StreamEntry e;
    bool dead = false;
    if (!ReadEntry(c, *node, &e, &dead)) return Damaged("bad stream entry");
    if (e.id < node->master || (*any && e.id <= *previous)) {
      return Damaged("stream entries out of order");
    }
    *previous = e.id;
    *any = true;
    if (dead) {
      ++tombstones;
      continue;
    }
    ++live;
    node->entries.push_back(std::move(e));
  }
  if (live != count || tombstones != deleted) return Damaged("stream node counts are wrong");
  node->deleted = deleted;
  return Status::Ok();
}

// streamEstimateDistanceFromFirstEverEntry for a stream read from type 15 (no deletions known).
int64_t EstimateEntriesRead(const StreamWhole& s, StreamId id) {
  if (s.entries_added == 0) return 0;
  if (id == s.last_id || (s.length == 0 && id < s.last_id)) {
    return static_cast<int64_t>(s.entries_added);
  }
  if (id > s.last_id) return -1;
  const auto before_first = static_cast<int64_t>(s.entries_added) - s.length;
  if (id < s.first_id) return before_first;
  return id == s.first_id ? before_first + 1 : -1;
}

Status ReadGroup(uint8_t type, ByteReader& in, const StreamWhole& s, StreamWholeGroup* g) {
  uint64_t entries_read = 0, pel = 0, consumers = 0;
  if (!ReadString(in, &g->name) || !ReadLenId(in, &g->last_id)) return Damaged("bad group");
  if (type == kTypeStream1) {
    g->entries_read = EstimateEntriesRead(s, g->last_id);
  } else if (ReadLength(in, &entries_read)) {
    g->entries_read = static_cast<int64_t>(entries_read);
  } else {
    return Damaged("bad group entries read");
  }
  if (!ReadLength(in, &pel)) return Damaged("bad group PEL");
  for (uint64_t i = 0; i < pel; ++i) {
    StreamWholePending p;
    uint64_t count = 0;
    if (!ReadRawId(in, &p.id) || !ReadMs(in, &p.delivery_ms) || !ReadLength(in, &count)) {
      return Damaged("bad group PEL entry");
    }
    p.delivery_count = static_cast<int64_t>(count);
    g->pending.push_back(std::move(p));
  }
  auto by_id = [](const StreamWholePending& a, const StreamWholePending& b) { return a.id < b.id; };
  std::sort(g->pending.begin(), g->pending.end(), by_id);
  for (size_t i = 1; i < g->pending.size(); ++i) {
    if (g->pending[i - 1].id == g->pending[i].id) return Damaged("repeated group PEL entry");
  }
  if (!ReadLength(in, &consumers)) return Damaged("bad consumer count");
  std::vector<bool> claimed(g->pending.size(), false);
  for (uint64_t i = 0; i < consumers; ++i) {
    StreamWholeConsumer c;
    int64_t active_ms = 0;
    uint64_t owned = 0;
    if (!ReadString(in, &c.name) || !ReadMs(in, &c.seen_ms) ||
        (type == kTypeStream3 && !ReadMs(in, &active_ms)) || !ReadLength(in, &owned)) {
      return Damaged("bad consumer");
    }
    for (uint64_t j = 0; j < owned; ++j) {
      StreamWholePending key;
      if (!ReadRawId(in, &key.id)) return Damaged("bad consumer PEL");
      auto it = std::lower_bound(g->pending.begin(), g->pending.end(), key, by_id);
      const auto at = static_cast<size_t>(it - g->pending.begin());
      if (it == g->pending.end() || it->id != key.id || claimed[at]) {
        return Damaged("consumer PEL entry not in its group's PEL");
      }
      claimed[at] = true;
      it->consumer = c.name;
    }
    g->consumers.push_back(std::move(c));
  }
  std::sort(g->consumers.begin(), g->consumers.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  for (size_t i = 1; i < g->consumers.size(); ++i) {
    if (g->consumers[i - 1].name == g->consumers[i].name) return Damaged("repeated consumer");
  }
  if (std::find(claimed.begin(), claimed.end(), false) != claimed.end()) {
    return Damaged("group PEL entry without a consumer");
  }
  return Status::Ok();
}

Status ReadNodes(ByteReader& in, StreamWhole* out, StreamId* last_entry, bool* any) {
  uint64_t nodes = 0;
  if (!ReadLength(in, &nodes)) return Damaged("bad stream node count");
  for (uint64_t i = 0; i < nodes; ++i) {
    std::string key, lp;
    if (!ReadString(in, &key) || !ReadString(in, &lp)) return Damaged("bad stream node");
    StreamWholeNode node;
    if (Status s = ReadNode(key, std::move(lp), last_entry, any, &node); !s.ok()) return s;
    out->length += static_cast<int64_t>(node.entries.size());
    if (!node.entries.empty()) out->nodes.push_back(std::move(node));
  }
  return Status::Ok();
}

void WriteNode(const StreamWholeNode& node, std::string* out) {
  ListpackBuilder lp;
  lp.AppendInteger(static_cast<int64_t>(node.entries.size()));
  lp.AppendInteger(0);
  lp.AppendInteger(static_cast<int64_t>(node.master_fields.size()));
  for (const std::string& f : node.master_fields) lp.AppendString(f);
  lp.AppendInteger(0);
  for (const StreamEntry& e : node.entries) {
    const size_t pairs = e.fields.size() / 2;
    bool same = pairs == node.master_fields.size();
    for (size_t i = 0; same && i < pairs; ++i) same = e.fields[2 * i] == node.master_fields[i];
    lp.AppendInteger(same ? kFlagSameFields : 0);
    lp.AppendInteger(static_cast<int64_t>(e.id.ms - node.master.ms));
    lp.AppendInteger(static_cast<int64_t>(e.id.seq - node.master.seq));
    if (!same) lp.AppendInteger(static_cast<int64_t>(pairs));
    for (size_t i = 0; i < pairs; ++i) {
      if (!same) lp.AppendString(e.fields[2 * i]);
      lp.AppendString(e.fields[2 * i + 1]);
    }
    const auto n = static_cast<int64_t>(pairs);
    lp.AppendInteger(n + 3 + (same ? 0 : n + 1));
  }
  std::string key;
  AppendId(node.master, &key);
  WriteString(key, out);
  WriteString(lp.Finish(), out);
}

void WriteLenId(StreamId id, std::string* out) {
  WriteLength(id.ms, out);
  WriteLength(id.seq, out);
}

void WriteGroup(const StreamWholeGroup& g, std::string* out) {
  WriteString(g.name, out);
  WriteLenId(g.last_id, out);
  WriteLength(static_cast<uint64_t>(g.entries_read), out);
  WriteLength(g.pending.size(), out);
  for (const StreamWholePending& p : g.pending) {
    AppendId(p.id, out);
    AppendLittleEndian(static_cast<uint64_t>(p.delivery_ms), 8, out);
    WriteLength(static_cast<uint64_t>(p.delivery_count), out);
  }
  WriteLength(g.consumers.size(), out);
  for (const StreamWholeConsumer& c : g.consumers) {
    WriteString(c.name, out);
    AppendLittleEndian(static_cast<uint64_t>(c.seen_ms), 8, out);
    std::string ids;
    size_t owned = 0;
    for (const StreamWholePending& p : g.pending) {
      if (p.consumer != c.name) continue;
      AppendId(p.id, &ids);
      ++owned;
    }
    WriteLength(owned, out);
    out->append(ids);
  }
}

}  // namespace

Status ReadStream(uint8_t type, ByteReader& in, StreamWhole* out) {
  *out = StreamWhole{};
  StreamId last_entry;
  bool any = false;
  if (Status s = ReadNodes(in, out, &last_entry, &any); !s.ok()) return s;
  uint64_t length = 0;
  if (!ReadLength(in, &length) || !ReadLenId(in, &out->last_id)) {
    return Damaged("bad stream metadata");
  }
  if (type == kTypeStream1) {
    out->entries_added = length;
    if (!out->nodes.empty()) out->first_id = out->nodes.front().entries.front().id;
  } else if (!ReadLenId(in, &out->first_id) || !ReadLenId(in, &out->max_deleted_id) ||
             !ReadLength(in, &out->entries_added)) {
    return Damaged("bad stream metadata");
  }
  if (length != static_cast<uint64_t>(out->length)) return Damaged("wrong stream length");
  if (any && out->last_id < last_entry) return Damaged("stream last ID below its entries");
  uint64_t groups = 0;
  if (!ReadLength(in, &groups)) return Damaged("bad stream group count");
  for (uint64_t i = 0; i < groups; ++i) {
    StreamWholeGroup g;
    if (Status s = ReadGroup(type, in, *out, &g); !s.ok()) return s;
    out->groups.push_back(std::move(g));
  }
  std::sort(out->groups.begin(), out->groups.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  for (size_t i = 1; i < out->groups.size(); ++i) {
    if (out->groups[i - 1].name == out->groups[i].name) return Damaged("repeated stream group");
  }
  return Status::Ok();
}

void WriteStream(const StreamWhole& s, std::string* out) {
  size_t nodes = 0;
  for (const StreamWholeNode& n : s.nodes) nodes += n.entries.empty() ? 0 : 1;
  WriteLength(nodes, out);
  for (const StreamWholeNode& n : s.nodes) {
    if (!n.entries.empty()) WriteNode(n, out);
  }
  WriteLength(static_cast<uint64_t>(s.length), out);
  WriteLenId(s.last_id, out);
  WriteLenId(s.first_id, out);
  WriteLenId(s.max_deleted_id, out);
  WriteLength(s.entries_added, out);
  WriteLength(s.groups.size(), out);
  for (const StreamWholeGroup& g : s.groups) WriteGroup(g, out);
}

}  // namespace sluice::formats
