// A whole stream as plain data: what DUMP/RESTORE, MIGRATE, RDB files and full sync move
// (storage/formats/rdb_stream.h spells it as Redis's RDB_TYPE_STREAM_*; storage/types/
// stream_whole.cc reads and writes a stream key from and to it). It travels inside a WholeValue
// of kind kStream as `string`, in the private form EncodeStreamWhole writes (plain bytes,
// deterministic: equal streams give equal strings; never stored, never sent).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/stream.h"

namespace sluice {

// One of Redis's listpack nodes: its key (the master ID the entries are delta-encoded against,
// the ID of the first entry it was made for), the master entry's field names, and its live
// entries in ID order. `deleted` and `bytes` keep Redis's node accounting (tombstones it still
// holds, the listpack's size) so later XADDs start new nodes where Redis would; a node written
// out carries only its live entries (deleted 0).
struct StreamWholeNode {
  StreamId master;
  std::vector<std::string> master_fields;
  std::vector<StreamEntry> entries;
  int64_t deleted = 0;
  int64_t bytes = 0;
};

struct StreamWholePending {
  StreamId id;
  int64_t delivery_ms = 0;  // absolute
  int64_t delivery_count = 0;
  std::string consumer;
};

struct StreamWholeConsumer {
  std::string name;
  int64_t seen_ms = 0;  // absolute
};

// A consumer group: its PEL in ID order (each entry naming its consumer), its consumers by name.
struct StreamWholeGroup {
  std::string name;
  StreamId last_id;
  int64_t entries_read = -1;  // -1: unknown
  std::vector<StreamWholePending> pending;
  std::vector<StreamWholeConsumer> consumers;
};

// Nodes in master-ID order, groups by name. An empty stream (no nodes) is a valid stream.
struct StreamWhole {
  std::vector<StreamWholeNode> nodes;
  int64_t length = 0;
  StreamId last_id;
  StreamId first_id;
  StreamId max_deleted_id;
  uint64_t entries_added = 0;
  std::vector<StreamWholeGroup> groups;
};

namespace stream_whole_detail {

inline void Put(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}
inline void Put(std::string* out, std::string_view s) {
  Put(out, s.size());
  out->append(s);
}
inline void Put(std::string* out, StreamId id) {
  Put(out, id.ms);
  Put(out, id.seq);
}

class Cursor {
 public:
  explicit Cursor(std::string_view in) : in_(in) {}
  bool Get(uint64_t* v) {
    if (in_.size() - at_ < 8) return false;
    *v = 0;
    for (int i = 0; i < 8; ++i) *v |= uint64_t{static_cast<unsigned char>(in_[at_ + i])} << (8 * i);
    at_ += 8;
    return true;
  }
  bool Get(int64_t* v) {
    uint64_t u = 0;
    if (!Get(&u)) return false;
    *v = static_cast<int64_t>(u);
    return true;
  }
  bool Get(std::string* s) {
    uint64_t n = 0;
    if (!Get(&n) || in_.size() - at_ < n) return false;
    s->assign(in_.substr(at_, n));
    at_ += n;
    return true;
  }
  bool Get(StreamId* id) { return Get(&id->ms) && Get(&id->seq); }
  // A count of items each at least `min_bytes` long: never more than the bytes left allow.
  bool Count(uint64_t* n, size_t min_bytes) {
    return Get(n) && *n <= (in_.size() - at_) / min_bytes;
  }
  bool done() const { return at_ == in_.size(); }

 private:
  std::string_view in_;
  size_t at_ = 0;
};

}  // namespace stream_whole_detail

inline std::string EncodeStreamWhole(const StreamWhole& s) {
  using stream_whole_detail::Put;
  std::string out;
  Put(&out, static_cast<uint64_t>(s.length));
  Put(&out, s.last_id);
  Put(&out, s.first_id);
  Put(&out, s.max_deleted_id);
  Put(&out, s.entries_added);
  Put(&out, s.nodes.size());
  for (const StreamWholeNode& n : s.nodes) {
    Put(&out, n.master);
    Put(&out, static_cast<uint64_t>(n.deleted));
    Put(&out, static_cast<uint64_t>(n.bytes));
    Put(&out, n.master_fields.size());
    for (const std::string& f : n.master_fields) Put(&out, f);
    Put(&out, n.entries.size());
    for (const StreamEntry& e : n.entries) {
      Put(&out, e.id);
      Put(&out, e.fields.size());
      for (const std::string& f : e.fields) Put(&out, f);
    }
  }
  Put(&out, s.groups.size());
  for (const StreamWholeGroup& g : s.groups) {
    Put(&out, g.name);
    Put(&out, g.last_id);
    Put(&out, static_cast<uint64_t>(g.entries_read));
    Put(&out, g.pending.size());
    for (const StreamWholePending& p : g.pending) {
      Put(&out, p.id);
      Put(&out, static_cast<uint64_t>(p.delivery_ms));
      Put(&out, static_cast<uint64_t>(p.delivery_count));
      Put(&out, p.consumer);
    }
    Put(&out, g.consumers.size());
    for (const StreamWholeConsumer& c : g.consumers) {
      Put(&out, c.name);
      Put(&out, static_cast<uint64_t>(c.seen_ms));
    }
  }
  return out;
}

// False when `in` is not what EncodeStreamWhole wrote.
inline bool DecodeStreamWhole(std::string_view in, StreamWhole* s) {
  stream_whole_detail::Cursor c(in);
  *s = StreamWhole{};
  uint64_t n = 0;
  if (!c.Get(&s->length) || !c.Get(&s->last_id) || !c.Get(&s->first_id) ||
      !c.Get(&s->max_deleted_id) || !c.Get(&s->entries_added) || !c.Count(&n, 8)) {
    return false;
  }
  s->nodes.resize(n);
  for (StreamWholeNode& node : s->nodes) {
    uint64_t fields = 0, entries = 0;
    if (!c.Get(&node.master) || !c.Get(&node.deleted) || !c.Get(&node.bytes) ||
        !c.Count(&fields, 8)) {
      return false;
    }
    node.master_fields.resize(fields);
    for (std::string& f : node.master_fields) {
      if (!c.Get(&f)) return false;
    }
    if (!c.Count(&entries, 24)) return false;
    node.entries.resize(entries);
    for (StreamEntry& e : node.entries) {
      if (!c.Get(&e.id) || !c.Count(&fields, 8)) return false;
      e.fields.resize(fields);
      for (std::string& f : e.fields) {
        if (!c.Get(&f)) return false;
      }
    }
  }
  if (!c.Count(&n, 8)) return false;
  s->groups.resize(n);
  for (StreamWholeGroup& g : s->groups) {
    uint64_t pending = 0, consumers = 0;
    if (!c.Get(&g.name) || !c.Get(&g.last_id) || !c.Get(&g.entries_read) || !c.Count(&pending, 8)) {
      return false;
    }
    g.pending.resize(pending);
    for (StreamWholePending& p : g.pending) {
      if (!c.Get(&p.id) || !c.Get(&p.delivery_ms) || !c.Get(&p.delivery_count) ||
          !c.Get(&p.consumer)) {
        return false;
      }
    }
    if (!c.Count(&consumers, 8)) return false;
    g.consumers.resize(consumers);
    for (StreamWholeConsumer& cons : g.consumers) {
      if (!c.Get(&cons.name) || !c.Get(&cons.seen_ms)) return false;
    }
  }
  return c.done();
}

}  // namespace sluice
