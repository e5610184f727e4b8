// The stream layout (stream.h): the codecs of its metadata and sub-keys, opening a stream, and
// its entries: append with Redis's node boundaries, range reads, deletes and trims.
#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstring>
#include <utility>

#include "scratch.h"
#include "sluice/stream_nodes.h"
#include "store_impl.h"
#include "stream.h"
#include "txn.h"

namespace sluice {

bool StreamId::Increment() {
  if (seq != std::numeric_limits<uint64_t>::max()) {
    ++seq;
    return true;
  }
  if (ms == std::numeric_limits<uint64_t>::max()) return false;
  ++ms;
  seq = 0;
  return true;
}

bool StreamId::Decrement() {
  if (seq != 0) {
    --seq;
    return true;
  }
  if (ms == 0) return false;
  --ms;
  seq = std::numeric_limits<uint64_t>::max();
  return true;
}

StreamId::Text StreamId::ToText() const {
  Text t;
  char* end = std::to_chars(t.bytes, t.bytes + 20, ms).ptr;
  *end++ = '-';
  end = std::to_chars(end, end + 20, seq).ptr;
  t.size = static_cast<uint8_t>(end - t.bytes);
  return t;
}

std::string StreamId::ToString() const { return std::string(ToText()); }

}  // namespace sluice

namespace sluice::internal {

namespace {

// Redis's STREAM_LISTPACK_MAX_SIZE: stream-node-max-bytes 0 or above it means this.
constexpr int64_t kListpackMaxSize = int64_t{1} << 30;
// SetStreamNodeLimits (sluice/stream_nodes.h); Redis's defaults.
std::atomic<int64_t> node_max_bytes{4096};
std::atomic<int64_t> node_max_entries{100};
constexpr int kItemSameFields = 2;  // STREAM_ITEM_FLAG_SAMEFIELDS

void StoreBE64(char* p, uint64_t v) {
  v = __builtin_bswap64(v);
  std::memcpy(p, &v, sizeof v);
}
void StoreStreamId(char* p, StreamId id) {  // 16 bytes
  StoreBE64(p, id.ms);
  StoreBE64(p + 8, id.seq);
}
uint64_t ReadBE64(const char* p) {
  uint64_t v = 0;
  std::memcpy(&v, p, sizeof v);
  return __builtin_bswap64(v);
}

void AppendString(std::string* out, std::string_view s) {
  AppendVarint(out, s.size());
  out->append(s);
}
bool ReadString(std::string_view in, size_t* at, std::string* out) {
  uint64_t n = 0;
  if (!ReadVarint(in, at, &n) || in.size() - *at < n) return false;
  out->assign(in.substr(*at, n));
  *at += n;
  return true;
}

// [varint count] then each [varint length][bytes], appended to out.
template <typename Strings>
void AppendStrings(std::string* out, const Strings& items) {
  size_t bytes = 5;
  for (const auto& s : items) bytes += 5 + s.size();
  out->reserve(out->size() + bytes);
  AppendVarint(out, items.size());
  for (const auto& s : items) AppendString(out, s);
}

std::string EncodeStrings(std::span<const std::string_view> items) {
  std::string out;
  AppendStrings(&out, items);
  return out;
}
bool DecodeStrings(std::string_view in, size_t at, std::vector<std::string>* out) {
  uint64_t n = 0;
  if (!ReadVarint(in, &at, &n) || n > in.size()) return false;
  out->resize(n);
  for (auto& s : *out) {
    if (!ReadString(in, &at, &s)) return false;
  }
  return true;
}

// An entry's or a node's sub-key ('e' or 'n', then the ID), on the stack: XADD makes three per
// call, and 17 bytes are past std::string's inline capacity (a heap allocation each).
class IdKey {
 public:
  IdKey(char tag, StreamId id) {
    bytes_[0] = tag;
    StoreStreamId(bytes_ + 1, id);
  }
  operator std::string_view() const { return {bytes_, sizeof bytes_}; }  // NOLINT: a key

 private:
  char bytes_[17];
};
IdKey EntryKey(StreamId id) { return IdKey('e', id); }
IdKey NodeKey(StreamId first) { return IdKey('n', first); }

// Listpack sizes (Redis's listpack.c encodings), to place node boundaries where Redis does.
size_t LpIntSize(int64_t v) {
  if (v >= 0 && v <= 127) return 2;  // 7-bit uint + 1 byte backlen
  if (v >= -4096 && v <= 4095) return 3;
  if (v >= -32768 && v <= 32767) return 4;
  if (v >= -8388608 && v <= 8388607) return 5;
  if (v >= INT32_MIN && v <= INT32_MAX) return 6;
  return 10;
}
size_t LpBacklen(size_t l) {
  if (l < 128) return 1;
  if (l < 16384) return 2;
  if (l < 2097152) return 3;
  if (l < 268435456) return 4;
  return 5;
}
// A string Redis stores as an integer: lpStringToInt64's rule (no sign but '-', no leading
// zeros, fits int64).
bool LpAsInt(std::string_view s, int64_t* v) {
  if (s.empty() || s.size() > 20) return false;
  if (s == "0") {
    *v = 0;
    return true;
  }
  size_t i = s[0] == '-' ? 1 : 0;
  if (i == s.size() || s[i] < '1' || s[i] > '9') return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && p == s.data() + s.size();
}
size_t LpStrSize(std::string_view s) {
  int64_t v = 0;
  if (LpAsInt(s, &v)) return LpIntSize(v);
  size_t enc = s.size() < 64 ? 1 + s.size() : s.size() < 4096 ? 2 + s.size() : 5 + s.size();
  return enc + LpBacklen(enc);
}

}  // namespace

void AppendStreamId(std::string* out, StreamId id) {
  char bytes[16];  // one append: a push_back per byte was 4% of XADD's CPU
  StoreStreamId(bytes, id);
  out->append(bytes, sizeof bytes);
}
StreamId ReadStreamId(std::string_view bytes) {
  return {ReadBE64(bytes.data()), ReadBE64(bytes.data() + 8)};
}

namespace {

constexpr size_t kStateBytes = 16 * 3 + 8 * 4 + 1 + 16;  // what every record holds
constexpr size_t kFloorBytes = 8;                        // then first_node_live_floor

std::string EncodeState(const StreamState& s) {
  std::string out;
  out.reserve(kStateBytes + kFloorBytes);  // one allocation: appends were 3% of XADD's CPU
  AppendStreamId(&out, s.last_id);
  AppendStreamId(&out, s.max_deleted_id);
  AppendStreamId(&out, s.first_id);
  AppendFixed64(&out, s.entries_added);
  AppendFixed64(&out, static_cast<uint64_t>(s.length));
  AppendFixed64(&out, static_cast<uint64_t>(s.groups));
  AppendFixed64(&out, static_cast<uint64_t>(s.nodes));
  out.push_back(s.has_tail ? 1 : 0);
  AppendStreamId(&out, s.tail_first);
  AppendFixed64(&out, static_cast<uint64_t>(s.first_node_live_floor));
  return out;
}

bool DecodeState(std::string_view in, StreamState* s) {
  if (in.size() < kStateBytes) return false;
  const char* p = in.data();
  s->last_id = ReadStreamId({p, 16});
  s->max_deleted_id = ReadStreamId({p + 16, 16});
  s->first_id = ReadStreamId({p + 32, 16});
  s->entries_added = DecodeFixed64(p + 48);
  s->length = static_cast<int64_t>(DecodeFixed64(p + 56));
  s->groups = static_cast<int64_t>(DecodeFixed64(p + 64));
  s->nodes = static_cast<int64_t>(DecodeFixed64(p + 72));
  s->has_tail = p[80] != 0;
  s->tail_first = ReadStreamId({p + 81, 16});
  s->first_node_live_floor = 0;
  if (in.size() >= kStateBytes + kFloorBytes) {
    s->first_node_live_floor = static_cast<int64_t>(DecodeFixed64(p + kStateBytes));
  }
  return true;
}

}  // namespace

Result<Stream> Stream::Open(Txn& txn, int db, std::string_view key, bool write) {
  auto c = Collection::Open(txn, db, key, ValueKind::kStream, write);
  if (!c.ok()) return c.status();
  Stream s(std::move(*c));
  const int64_t max_bytes = node_max_bytes.load(std::memory_order_relaxed);
  s.node_max_bytes_ = max_bytes <= 0 || max_bytes > kListpackMaxSize ? kListpackMaxSize : max_bytes;
  s.node_max_entries_ = node_max_entries.load(std::memory_order_relaxed);
  if (s.exists() && !DecodeState(s.c_.meta().extra, &s.st_)) {
    return Status::Corruption("invalid stream metadata");
  }
  return s;
}

void Stream::Create() {
  if (exists()) return;
  c_.Create();
  c_.meta().count = 1;
  st_ = StreamState{};
}

void Stream::Save() {
  c_.meta().count = 1;
  c_.meta().extra = EncodeState(st_);
  c_.Save();
}

Status Stream::GetEntry(StreamId id, StreamEntry* out, bool* found) {
  std::string v;
  if (Status s = c_.Get(ElementCf::kStream, EntryKey(id), &v, found); !s.ok() || !*found) return s;
  out->id = id;
  if (!DecodeStrings(v, 0, &out->fields)) return Status::Corruption("invalid stream entry");
  return Status::Ok();
}

Status Stream::Range(StreamId start, StreamId end, bool rev, int64_t count,
                     std::vector<StreamEntry>* out) {
  if (start > end || !exists() || st_.length == 0) return Status::Ok();
  // No live entry lies below first_id: starting there skips the erased entries' tombstones,
  // which a seek from the stream's start would step over one by one until compaction.
  if (start < st_.first_id) start = st_.first_id;
  if (start > end) return Status::Ok();
  auto it = c_.NewIterator(ElementCf::kStream, "e");
  const std::string lo = c_.SubKey(EntryKey(start));
  const std::string hi = c_.SubKey(EntryKey(end));
  if (rev) {
    it->SeekForPrev(hi);
  } else {
    it->Seek(lo);
  }
  while (it->Valid() && (count == 0 || static_cast<int64_t>(out->size()) < count)) {
    std::string_view k = it->key().ToStringView();
    if (rev ? k < lo : k > hi) break;
    std::string_view el = c_.ElementOf(it->key());
    if (el.size() != 17 || el[0] != 'e') break;
    StreamEntry e;
    e.id = ReadStreamId(el.substr(1));
    if (!DecodeStrings(it->value().ToStringView(), 0, &e.fields)) {
      return Status::Corruption("invalid stream entry");
    }
    out->push_back(std::move(e));
    if (rev) {
      it->Prev();
    } else {
      it->Next();
    }
  }
  return it->status().ok() ? Status::Ok() : Status::IOError(it->status().ToString());
}

// ---- Nodes

Status Stream::LoadNode(StreamId first, StreamNode* out) {
  bool found = false;
  if (Status s = FindNode(first, out, &found); !s.ok()) return s;
  return found ? Status::Ok() : Status::Corruption("stream node missing");
}

Status Stream::FindNode(StreamId first, StreamNode* out, bool* found) {
  thread_local std::string v;  // decoded below; kept for its capacity
  if (Status s = c_.Get(ElementCf::kStream, NodeKey(first), &v, found); !s.ok() || !*found) {
    return s;
  }
  if (v.size() < 40) return Status::Corruption("stream node missing");
  out->first = first;
  out->last = ReadStreamId(v);
  out->live = static_cast<int64_t>(DecodeFixed64(v.data() + 16));
  out->deleted = static_cast<int64_t>(DecodeFixed64(v.data() + 24));
  out->bytes = static_cast<int64_t>(DecodeFixed64(v.data() + 32));
  const bool decoded = DecodeStrings(v, 40, &out->master_fields);
  TrimScratch(&v);
  return decoded ? Status::Ok() : Status::Corruption("bad stream node");
}

void Stream::SaveNode(const StreamNode& n) {
  thread_local std::string v;  // the unit copies it
  v.clear();
  AppendStreamId(&v, n.last);
  AppendFixed64(&v, static_cast<uint64_t>(n.live));
  AppendFixed64(&v, static_cast<uint64_t>(n.deleted));
  AppendFixed64(&v, static_cast<uint64_t>(n.bytes));
  AppendStrings(&v, n.master_fields);
  c_.PutRewritable(ElementCf::kStream, NodeKey(n.first), v);
  TrimScratch(&v);
}

Status Stream::ListNodes(std::vector<StreamNode>* out) {
  std::vector<StreamId> firsts;
  Status s = Scan("n", "", false, [&](std::string_view rest, std::string_view) {
    if (rest.size() == 16) firsts.push_back(ReadStreamId(rest));
    return true;
  });
  if (!s.ok()) return s;
  out->resize(firsts.size());
  for (size_t i = 0; i < firsts.size(); ++i) {
    if (Status e = LoadNode(firsts[i], &(*out)[i]); !e.ok()) return e;
  }
  return Status::Ok();
}

void Stream::PutNode(const StreamNode& n, std::span<const StreamEntry> entries) {
  SaveNode(n);
  for (const StreamEntry& e : entries) {
    std::vector<std::string_view> fields(e.fields.begin(), e.fields.end());
    c_.Put(ElementCf::kStream, EntryKey(e.id), EncodeStrings(fields));
  }
}

void Stream::EraseNode(const StreamNode& n) {
  c_.Erase(ElementCf::kStream, NodeKey(n.first));
  st_.nodes -= 1;
  st_.first_node_live_floor = 0;  // the first node may be another one now
  if (st_.has_tail && st_.tail_first == n.first) st_.has_tail = false;
}

Status Stream::NodeOf(StreamId id, StreamNode* out, bool* found) {
  *found = false;
  StreamId first;
  {
    auto it = c_.NewIterator(ElementCf::kStream, "n");
    it->SeekForPrev(c_.SubKey(NodeKey(id)));
    if (!it->Valid()) return Status::Ok();
    std::string_view el = c_.ElementOf(it->key());
    if (el.size() != 17 || el[0] != 'n') return Status::Ok();
    first = ReadStreamId(el.substr(1));
  }
  *found = true;
  return LoadNode(first, out);
}

// first_id is never above the first live entry (see stream.h), so the node holding the first
// live entry is the first node. Found without a backward walk from a point behind which no node
// is live: such a walk steps over the tombstone of every node trimmed before, down to the
// stream's first possible node key, and made each trim of a long-lived stream cost in
// proportion to what earlier trims removed (BullMQ's event stream: XADD MAXLEN ~ per job).
Status Stream::FirstNode(StreamNode* out, bool* found) {
  *found = false;
  if (st_.nodes == 0) return Status::Ok();
  // Without XDEL or exact trims the first node starts at first_id: one point read, no iterator.
  if (Status s = FindNode(st_.first_id, out, found); !s.ok() || *found) return s;
  // Else the first node starting after first_id, and the first live entry: when that entry
  // comes before the node, a node starting before first_id holds it, and the backward step
  // from the entry's position crosses only keys inside that node's range.
  StreamId after;
  bool have_after = false;
  if (Status s = FirstElementFrom('n', NodeKey(st_.first_id), &after, &have_after); !s.ok()) {
    return s;
  }
  StreamId entry;
  bool have_entry = false;
  if (Status s = FirstElementFrom('e', EntryKey(st_.first_id), &entry, &have_entry); !s.ok()) {
    return s;
  }
  if (have_entry && (!have_after || entry < after)) return NodeOf(entry, out, found);
  if (!have_after) return Status::Ok();
  *found = true;
  return LoadNode(after, out);
}

// The ID of the first sub-key of kind `tag` ('e' entries, 'n' nodes) at or after `from`.
Status Stream::FirstElementFrom(char tag, std::string_view from, StreamId* id, bool* found) {
  *found = false;
  auto it = c_.NewIterator(ElementCf::kStream, std::string_view(&tag, 1));
  it->Seek(c_.SubKey(from));
  if (it->Valid()) {
    std::string_view el = c_.ElementOf(it->key());
    *found = el.size() == 17 && el[0] == tag;
    if (*found) *id = ReadStreamId(el.substr(1));
  }
  return it->status().ok() ? Status::Ok() : Status::IOError(it->status().ToString());
}

// After the tail node went: the last node left, if any, is the new tail.
Status Stream::RefreshTail() {
  if (st_.has_tail) return Status::Ok();
  if (st_.nodes == 0) return Status::Ok();  // no walk back over the erased nodes' tombstones
  StreamNode n;
  bool found = false;
  if (Status s = NodeOf(StreamId::Max(), &n, &found); !s.ok()) return s;
  st_.has_tail = found;
  if (found) st_.tail_first = n.first;
  return Status::Ok();
}

// Redis's streamAppendItem: a new node when the tail's listpack would reach
// stream-node-max-bytes or holds stream-node-max-entries entries (live and deleted), else the entry
// joins the tail, compressed when its fields are the node's master fields.
Status Stream::Append(StreamId id, std::span<const std::string_view> fields) {
  size_t raw_bytes = 0;
  for (auto f : fields) raw_bytes += f.size();
  const int64_t pairs = static_cast<int64_t>(fields.size() / 2);
  // Kept per thread, so that reading the tail node's master fields reuses their strings.
  thread_local StreamNode node;
  bool join = st_.has_tail;
  if (join) {
    if (Status s = LoadNode(st_.tail_first, &node); !s.ok()) return s;
    join = node.bytes + static_cast<int64_t>(raw_bytes) < node_max_bytes_ &&
           (node_max_entries_ == 0 || node.live + node.deleted < node_max_entries_);
  }
  bool same = true;
  if (!join) {
    node.first = node.last = id;
    node.live = node.deleted = 0;
    node.master_fields.clear();
    node.bytes = 7 + LpIntSize(1) + LpIntSize(0) + LpIntSize(pairs) + LpIntSize(0);
    for (int64_t i = 0; i < pairs; ++i) {
      node.master_fields.emplace_back(fields[2 * i]);
      node.bytes += static_cast<int64_t>(LpStrSize(fields[2 * i]));
    }
    st_.nodes += 1;
    st_.has_tail = true;
    st_.tail_first = id;
  } else {
    same = static_cast<int64_t>(node.master_fields.size()) == pairs;
    for (int64_t i = 0; same && i < pairs; ++i) same = node.master_fields[i] == fields[2 * i];
  }
  size_t bytes = LpIntSize(same ? kItemSameFields : 0) +
                 LpIntSize(static_cast<int64_t>(id.ms - node.first.ms)) +
                 LpIntSize(static_cast<int64_t>(id.seq - node.first.seq));
  if (!same) bytes += LpIntSize(pairs);
  for (int64_t i = 0; i < pairs; ++i) {
    if (!same) bytes += LpStrSize(fields[2 * i]);
    bytes += LpStrSize(fields[2 * i + 1]);
  }
  bytes += LpIntSize(pairs + 3 + (same ? 0 : pairs + 1));
  node.bytes += static_cast<int64_t>(bytes);
  node.live += 1;
  node.last = id;
  SaveNode(node);
  for (std::string& f : node.master_fields) TrimScratch(&f);
  thread_local std::string value;  // the batch copies it
  value.clear();
  AppendStrings(&value, fields);
  c_.Put(ElementCf::kStream, EntryKey(id), value);
  TrimScratch(&value);  // a huge entry's buffer is not kept by every thread
  st_.length += 1;
  st_.entries_added += 1;
  st_.last_id = id;
  if (st_.length == 1) st_.first_id = id;
  return Status::Ok();
}

// The first live entry becomes first_id (0-0 when none), as streamGetEdgeID does.
// Seeks from the old first_id (nothing live lies below it), so it steps only over what was
// just removed.
void Stream::UpdateFirstId() {
  const StreamId from = st_.first_id;
  st_.first_id = StreamId{};
  if (st_.length == 0) return;
  StreamId first;
  bool found = false;
  // A read error leaves 0-0, which the invariant allows (never above the first live entry).
  if (FirstElementFrom('e', EntryKey(from), &first, &found).ok() && found) st_.first_id = first;
}

Status Stream::Delete(StreamId id, bool* deleted) {
  *deleted = false;
  std::string v;
  bool found = false;
  if (Status s = c_.Get(ElementCf::kStream, EntryKey(id), &v, &found); !s.ok() || !found) {
    return s;
  }
  StreamNode node;
  bool have = false;
  if (Status s = NodeOf(id, &node, &have); !s.ok()) return s;
  if (!have) return Status::Corruption("stream entry without a node");
  c_.Erase(ElementCf::kStream, EntryKey(id));
  st_.first_node_live_floor = 0;  // the entry may have been the first node's
  node.live -= 1;
  node.deleted += 1;
  if (node.live == 0) {
    EraseNode(node);
    if (Status s = RefreshTail(); !s.ok()) return s;
  } else {
    SaveNode(node);
  }
  st_.length -= 1;
  *deleted = true;
  return Status::Ok();
}

Status Stream::EraseEntriesOf(const StreamNode& n) {
  std::vector<std::string> keys;
  {
    auto it = c_.NewIterator(ElementCf::kStream, "e");
    const std::string hi = c_.SubKey(EntryKey(n.last));
    for (it->Seek(c_.SubKey(EntryKey(n.first))); it->Valid(); it->Next()) {
      if (it->key().ToStringView() > hi) break;
      keys.emplace_back(c_.ElementOf(it->key()));
    }
    if (!it->status().ok()) return Status::IOError(it->status().ToString());
  }
  for (const auto& k : keys) c_.Erase(ElementCf::kStream, k);
  return Status::Ok();
}

// Redis's streamTrim over the emulated nodes: whole nodes from the head while the rule allows,
// then (exact trims only) entries of the first node that cannot go whole.
Result<int64_t> Stream::Trim(const StreamTrim& t) {
  if (t.by == StreamTrim::By::kNone || !exists()) return int64_t{0};
  const bool by_len = t.by == StreamTrim::By::kMaxLen;
  int64_t removed = 0;
  while (st_.nodes > 0) {
    if (by_len && st_.length <= t.max_len) break;
    // The first node holds at least the floor: when even that many cannot go, it cannot go
    // whole, and an approximate trim stops here without reading it.
    if (by_len && t.approx && st_.length - st_.first_node_live_floor < t.max_len) break;
    StreamNode node;
    bool have = false;
    if (Status s = FirstNode(&node, &have); !s.ok()) return s;
    if (!have) break;
    if (t.limit != 0 && removed + node.live > t.limit) break;
    const bool whole = by_len ? st_.length - node.live >= t.max_len : node.last < t.min_id;
    if (whole) {
      if (Status s = EraseEntriesOf(node); !s.ok()) return s;
      EraseNode(node);
      st_.length -= node.live;
      removed += node.live;
      // Nothing live lies below the ID after it (the node was the first): the next FirstNode
      // starts there, not at the erased node.
      st_.first_id = node.last;
      st_.first_id.Increment();
      continue;
    }
    st_.first_node_live_floor = node.live;
    if (t.approx) break;
    std::vector<StreamEntry> entries;
    if (Status s = Range(node.first, node.last, false, 0, &entries); !s.ok()) return s;
    for (const auto& e : entries) {
      if (by_len ? st_.length <= t.max_len : e.id >= t.min_id) break;
      c_.Erase(ElementCf::kStream, EntryKey(e.id));
      node.live -= 1;
      node.deleted += 1;
      st_.length -= 1;
      removed += 1;
    }
    SaveNode(node);
    st_.first_node_live_floor = node.live;
    break;
  }
  if (Status s = RefreshTail(); !s.ok()) return s;
  if (st_.length == 0) {
    st_.first_id = StreamId{};
  } else if (removed > 0) {
    UpdateFirstId();
  }
  return removed;
}

}  // namespace sluice::internal

namespace sluice {

void SetStreamNodeLimits(int64_t max_bytes, int64_t max_entries) {
  internal::node_max_bytes.store(max_bytes, std::memory_order_relaxed);
  internal::node_max_entries.store(max_entries, std::memory_order_relaxed);
}

}  // namespace sluice
