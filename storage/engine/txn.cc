#include "txn.h"

#include <xxhash.h>

#include <algorithm>
#include <limits>

#include "indexed_batch.h"

namespace sluice::internal {

namespace {
// Key lists longer than this (a many-key command) are given back after the Txn.
constexpr size_t kKeepKeySlots = 64;
// Scratch objects a thread keeps for reuse (one per unit alive at once on that thread).
constexpr size_t kKeepScratch = 4;

uint64_t HashKey(std::string_view k) { return XXH3_64bits(k.data(), k.size()); }

// A list of keys kept in reused strings: clearing it keeps every string's capacity.
struct KeyList {
  std::vector<std::string> slots;
  // hashes[i]: HashKey(slots[i]). SortPositions orders by it first: sorting a commit group's
  // keys by their bytes was 4% of an INCR's instructions (a string compare per step).
  std::vector<uint64_t> hashes;
  size_t n = 0;
  void Add(std::string_view k) {
    if (n == slots.size()) {
      slots.emplace_back();
      hashes.emplace_back();
    }
    hashes[n] = HashKey(k);
    slots[n++].assign(k);
  }
  bool Same(size_t a, size_t b) const { return hashes[a] == hashes[b] && slots[a] == slots[b]; }
  bool Contains(std::string_view k, size_t from = 0) const {
    const auto end = slots.begin() + static_cast<std::ptrdiff_t>(n);
    return std::find(slots.begin() + static_cast<std::ptrdiff_t>(from), end, k) != end;
  }
  void Trim() {
    if (slots.size() > kKeepKeySlots) {  // a many-key command (MSET): not kept
      std::vector<std::string>().swap(slots);
      std::vector<uint64_t>().swap(hashes);
    } else {
      for (size_t i = 0; i < n; ++i) TrimScratch(&slots[i]);
    }
    n = 0;
  }
};

constexpr uint32_t kDefaultCf = 0;  // RocksDB's default column family: the keys

int DbOf(std::string_view raw_key) {
  return raw_key.empty() ? -1 : static_cast<unsigned char>(raw_key[0]);
}

// What a slot of the written list did to its key in the default column family.
enum WriteOp : uint8_t { kTouched = 0, kPutPersistent = 1, kPutExpiring = 2, kDeleted = 3 };

KeyCounts CountsAfter(uint8_t op) {
  return KeyCounts{op == kPutPersistent || op == kPutExpiring ? 1 : 0, op == kPutExpiring ? 1 : 0};
}

// A key's stored state as a locked read found it, and how many slots the written list had then
// (a note is the stored state only for a key first written at a later slot).
struct ReadNote {
  KeyCounts counts;
  int64_t expire_at_ms = kNoExpiry;  // the stored value's (expired or not)
  size_t written_n = 0;
};

}  // namespace

struct Txn::Scratch {
  IndexedBatch batch;
  rocksdb::PinnableSlice read;
  // The last ReadView's key and outcome while `read` still holds its value (read_valid): a read
  // of the same key before any write gets it again without searching the batch or the store.
  std::string read_key;
  bool read_valid = false;
  bool read_found = false;
  // The last Put of the default column family, not yet in the batch (pending): the unit's next
  // write of the same key replaces it, so a unit that rewrites a key (INCRBY then EXPIRE) stages
  // one record (one memtable insert, one log record), and reads of it need no batch search.
  // Anything else that needs the batch to be complete puts it there first (FlushPending).
  std::string pending_key;
  std::string pending_value;  // the encoded value
  bool pending = false;
  KeyList expired;                   // expired values Read found, each once
  KeyList written;                   // keys this txn wrote or touched, in order (repeats allowed)
  std::vector<uint8_t> ops;          // ops[i]: what written.slots[i] did (WriteOp)
  std::vector<int64_t> put_expiry;   // put_expiry[i]: the expiry a kPutExpiring op wrote
  KeyList reads;                     // keys read from the store under their lock...
  std::vector<ReadNote> read_notes;  // ...and what was stored (parallel to reads)
  // ComputeCountChanges's scratch: written (every op) and reads, sorted by (key, position).
  std::vector<uint32_t> order;
  std::vector<uint32_t> read_order;
  // The keys whose expiry the commit hands to the expiry cycle (ComputeCountChanges), and
  // those expiries.
  std::vector<const std::string*> hand_keys;
  std::vector<int64_t> hand_at_ms;
  uint32_t flushed = 0;                         // bit d: DeleteDb(d) ran in this unit
  size_t written_at_flush[kNumDatabases] = {};  // written.n when db d was last emptied

  // The state at the mark (Txn::SetMark), restored by RollbackToMark.
  struct Mark {
    size_t expired_n = 0;
    size_t written_n = 0;
    size_t reads_n = 0;
    uint32_t flushed = 0;
    uint32_t batch_count = 0;
    size_t written_at_flush[kNumDatabases] = {};
  } mark;

  void Reset() {
    if (batch.Count() > 0) batch.Clear();  // a read-only unit, the common case, staged nothing
    read.Reset();
    read_valid = false;
    pending = false;
    expired.n = 0;
    written.n = 0;
    reads.n = 0;
    hand_keys.clear();
    hand_at_ms.clear();
    flushed = 0;
  }
  void Trim() {
    read.Reset();
    read_valid = false;
    TrimScratch(read.GetSelf());
    TrimScratch(&read_key);
    TrimScratch(&pending_key);
    TrimScratch(&pending_value);
    batch.Trim(kScratchKeepBytes);
    expired.Trim();
    written.Trim();
    reads.Trim();
    if (ops.size() > kKeepKeySlots) std::vector<uint8_t>().swap(ops);
    if (put_expiry.size() > kKeepKeySlots) std::vector<int64_t>().swap(put_expiry);
    if (hand_keys.capacity() > kKeepKeySlots) std::vector<const std::string*>().swap(hand_keys);
    if (hand_at_ms.capacity() > kKeepKeySlots) std::vector<int64_t>().swap(hand_at_ms);
    if (read_notes.size() > kKeepKeySlots) std::vector<ReadNote>().swap(read_notes);
    if (order.size() > kKeepKeySlots) std::vector<uint32_t>().swap(order);
    if (read_order.size() > kKeepKeySlots) std::vector<uint32_t>().swap(read_order);
  }
};

using ScratchList = FreeList<Txn::Scratch, kKeepScratch>;

Txn::Txn(Store::Impl& impl, UnitTime now)
    : impl_(impl), now_ns_(now.ns), now_ms_(now.ns / 1'000'000), s_(ScratchList::Acquire()) {
  s_->Reset();
}

Txn::~Txn() {
  s_->Trim();
  s_->Reset();
  ScratchList::Release(s_);
}

Status Txn::ClaimWrite(std::string_view raw_key) {
  if (locks_ == nullptr || locks_->TryAcquire(raw_key)) return Status::Ok();
  conflicted_ = true;
  return Status::LockConflict();
}

bool Txn::DbFlushed(std::string_view raw_key) const {
  const int db = DbOf(raw_key);
  return db >= 0 && db < kNumDatabases && (s_->flushed & (1u << db)) != 0;
}

Txn::SnapshotReads::SnapshotReads(Txn& txn) : txn_(txn) {
  if (txn_.locks_ != nullptr && !txn_.lock_reads_ && txn_.snapshot_ == nullptr) {
    txn_.TakeSnapshot();
  }
}

Txn::SnapshotReads::SnapshotReads(Txn& txn, OneKey) : txn_(txn) {
  if (txn_.locks_ != nullptr && !txn_.lock_reads_ && txn_.snapshot_ == nullptr) {
    txn_.snapshot_deferred_ = true;
  }
}

Txn::SnapshotReads::~SnapshotReads() {
  if (txn_.snapshot_ != nullptr) txn_.impl_.db()->ReleaseSnapshot(txn_.snapshot_);
  txn_.snapshot_ = nullptr;
  txn_.snapshot_deferred_ = false;
}

void Txn::TakeSnapshot() {
  snapshot_ = impl_.db()->GetSnapshot();
  s_->read_valid = false;  // a read from before the snapshot
}

void Txn::ResolveSnapshot(const std::string* raw_key) {
  snapshot_deferred_ = false;
  if (raw_key != nullptr && locks_->Holds(*raw_key)) return;
  TakeSnapshot();
}

bool Txn::IsDefaultCf(const rocksdb::ColumnFamilyHandle* cf) const {
  return cf == impl_.db()->DefaultColumnFamily();
}

void Txn::FlushPending() {
  if (!s_->pending) return;
  s_->pending = false;
  s_->batch.Put(impl_.db()->DefaultColumnFamily(), s_->pending_key, s_->pending_value);
}

Status Txn::GetRaw(rocksdb::ColumnFamilyHandle* cf, std::string_view key, std::string* value,
                   bool* found) {
  if (snapshot_deferred_) ResolveSnapshot(nullptr);
  if (IsDefaultCf(cf)) FlushPending();
  rocksdb::PinnableSlice slice(value);
  *found = false;
  rocksdb::ReadOptions ro;
  ro.snapshot = snapshot_;
  std::string_view staged;
  switch (s_->batch.Find(cf->GetID(), key, &staged)) {
    case IndexedBatch::Staged::kPut:
      value->assign(staged);
      *found = true;
      return Status::Ok();
    case IndexedBatch::Staged::kDeleted:
      return Status::Ok();
    case IndexedBatch::Staged::kNone:
      break;
  }
  rocksdb::Status s = impl_.db()->Get(ro, cf, rocksdb::Slice(key.data(), key.size()), &slice);
  if (s.IsNotFound()) return Status::Ok();
  if (!s.ok()) return FromRocks(s);
  // Unpinned, the value was copied into *value (the slice's buffer) already.
  if (slice.IsPinned()) value->assign(slice.data(), slice.size());
  *found = true;
  return Status::Ok();
}

Result<std::optional<EntryView>> Txn::ReadView(const std::string& raw_key) {
  if (snapshot_deferred_) ResolveSnapshot(&raw_key);
  rocksdb::PinnableSlice* read = &s_->read;
  if (s_->pending && raw_key == s_->pending_key) {
    // The unit's own last write (made after any DeleteDb, which puts it in the batch first).
    // What was stored before it was noted by the read before the write, if any.
    read->Reset();
    read->PinSelf(rocksdb::Slice(s_->pending_value));
    s_->read_key.assign(raw_key);
    s_->read_valid = true;
    s_->read_found = true;
    return DecodeRead(raw_key, /*note=*/false, /*locked=*/true);
  }
  if (s_->read_valid && raw_key == s_->read_key) {
    // A read under the key's lock and no write since: `read` still holds what it found, and it
    // was noted then.
    if (!s_->read_found) return std::optional<EntryView>();
    return DecodeRead(raw_key, /*note=*/false, /*locked=*/true);
  }
  read->Reset();
  s_->read_valid = false;
  bool found = false;
  const rocksdb::Slice key(raw_key);
  const bool flushed = DbFlushed(raw_key);
  if (flushed) {
    // The db was emptied in this unit: only what the unit wrote there since counts.
    if (!s_->written.Contains(raw_key, s_->written_at_flush[DbOf(raw_key)])) {
      return std::optional<EntryView>();
    }
    std::string_view staged;
    if (s_->batch.Find(kDefaultCf, raw_key, &staged) == IndexedBatch::Staged::kPut) {
      read->PinSelf(rocksdb::Slice(staged.data(), staged.size()));
      found = true;
    }
  } else {
    std::string_view staged;
    switch (s_->batch.Find(kDefaultCf, raw_key, &staged)) {
      case IndexedBatch::Staged::kPut:
        read->PinSelf(rocksdb::Slice(staged.data(), staged.size()));
        found = true;
        break;
      case IndexedBatch::Staged::kDeleted:
        break;
      case IndexedBatch::Staged::kNone:
        if (Status st = impl_.ReadRaw(raw_key, read, &found, snapshot_); !st.ok()) return st;
        break;
    }
  }
  // Only a read under the key's lock is given again (the value cannot change before the unit
  // ends) and noted (see NoteRead).
  const bool locked = MayRemoveExpired(raw_key);
  s_->read_valid = locked;
  if (locked) {
    s_->read_key.assign(raw_key);
    s_->read_found = found;
  }
  if (!found) {
    if (!flushed && locked) NoteRead(raw_key, nullptr);
    return std::optional<EntryView>();
  }
  return DecodeRead(raw_key, /*note=*/!flushed && locked, locked);
}

// The value ReadView left in s_->read, as a live entry (nullopt when expired). `locked`: the
// unit holds the key's lock (MayRemoveExpired).
Result<std::optional<EntryView>> Txn::DecodeRead(const std::string& raw_key, bool note,
                                                 bool locked) {
  auto view = DecodeValue(s_->read.ToStringView());
  if (!view) return Status::Corruption("invalid value encoding");
  if (note) NoteRead(raw_key, &*view);
  if (!IsExpired(view->expire_at_ms, now_ms_)) return std::optional<EntryView>(*view);
  if (!s_->expired.Contains(raw_key) && (locked || (!DbFlushed(raw_key) && TakeExpired(raw_key)))) {
    s_->expired.Add(raw_key);
  }
  return std::optional<EntryView>();
}

Result<std::optional<Entry>> Txn::Read(const std::string& raw_key) {
  auto view = ReadView(raw_key);
  if (!view.ok()) return view.status();
  if (!view->has_value()) return std::optional<Entry>();
  const EntryView& v = **view;
  return std::optional<Entry>(Entry{v.kind, v.expire_at_ms, std::string(v.payload)});
}

void Txn::NoteWritten(std::string_view raw_key, uint8_t op, int64_t expire_at_ms) {
  s_->written.Add(raw_key);
  if (s_->ops.size() < s_->written.n) {
    s_->ops.resize(s_->written.n);
    s_->put_expiry.resize(s_->written.n);
  }
  s_->ops[s_->written.n - 1] = op;
  s_->put_expiry[s_->written.n - 1] = expire_at_ms;
}

bool Txn::TakeExpired(const std::string& raw_key) {
  if (locks_ == nullptr || !locks_->TryAcquire(raw_key)) return false;
  // Locked now: what is stored may have been rewritten since the unlocked read.
  bool found = false;
  s_->read_valid = false;
  s_->read.Reset();
  if (!impl_.ReadRaw(raw_key, &s_->read, &found).ok() || !found) return false;
  auto expiry = DecodeExpiry(s_->read.ToStringView());
  return expiry && IsExpired(*expiry, now_ms_);
}

void Txn::NoteRead(std::string_view raw_key, const EntryView* v) {
  s_->reads.Add(raw_key);
  if (s_->read_notes.size() < s_->reads.n) s_->read_notes.resize(s_->reads.n);
  const KeyCounts counts{v != nullptr ? 1 : 0,
                         v != nullptr && v->expire_at_ms != kNoExpiry ? 1 : 0};
  s_->read_notes[s_->reads.n - 1] =
      ReadNote{counts, v != nullptr ? v->expire_at_ms : kNoExpiry, s_->written.n};
}

void Txn::Put(const std::string& raw_key, ValueKind kind, int64_t expire_at_ms,
              std::string_view payload) {
  // [header][payload] (EncodeValue) assembled in the pending buffer; it reaches the batch when
  // something needs the batch whole (FlushPending), unless a later Put of the key replaces it.
  // `payload` may point into `read` (a value just read), never into pending_value: ReadView
  // copies a pending value into `read`.
  char header[kMaxValueHeader];
  const size_t n = EncodeValueHeader(kind, expire_at_ms, header);
  if (s_->pending && raw_key != s_->pending_key) FlushPending();
  s_->read_valid = false;
  s_->pending_key.assign(raw_key);
  s_->pending_value.assign(header, n);
  s_->pending_value.append(payload);
  s_->pending = true;
  NoteWritten(raw_key, expire_at_ms != kNoExpiry ? kPutExpiring : kPutPersistent, expire_at_ms);
}

void Txn::RemoveExpired(std::string_view raw_key) { s_->expired.Add(raw_key); }

void Txn::Delete(const std::string& raw_key) {
  if (s_->pending && raw_key == s_->pending_key) s_->pending = false;  // the deletion replaces it
  s_->read_valid = false;
  s_->batch.Delete(impl_.db()->DefaultColumnFamily(), raw_key);
  NoteWritten(raw_key, kDeleted);
}

void Txn::Touch(std::string_view raw_key) { NoteWritten(raw_key, kTouched); }

void Txn::PutRaw(rocksdb::ColumnFamilyHandle* cf, std::string_view key, std::string_view value) {
  if (IsDefaultCf(cf)) {
    FlushPending();
    s_->read_valid = false;
  }
  s_->batch.Put(cf, key, value);
}

void Txn::DeleteRaw(rocksdb::ColumnFamilyHandle* cf, std::string_view key) {
  if (IsDefaultCf(cf)) {
    FlushPending();
    s_->read_valid = false;
  }
  s_->batch.Delete(cf, key);
}

void Txn::DeleteDb(int db) {
  FlushPending();  // before the range deletion, and into the index the walk below reads
  s_->read_valid = false;
  const std::string begin = DbPrefix(db);
  const std::string end = DbEnd(db);
  // Keys the unit already wrote in the db are deleted in the index too, so the unit's own reads
  // and iterators stop seeing them; the range deletion then covers what is stored.
  std::vector<std::string> staged;
  {
    std::vector<IndexedBatch::Delta> deltas;
    s_->batch.Sorted(kDefaultCf, begin, end, &deltas);
    for (const auto& d : deltas) staged.emplace_back(d.key);
  }
  rocksdb::ColumnFamilyHandle* keys_cf = impl_.db()->DefaultColumnFamily();
  for (const auto& k : staged) s_->batch.Delete(keys_cf, k);
  // The index does not hold range deletions: it goes into the batch, in order, and DbFlushed()
  // masks the stored keys for this unit's reads.
  s_->batch.batch()->DeleteRange(begin, end);
  // Elements of the db's collections are stale once their metadata is gone (the element filter
  // would drop them); deleting their ranges reclaims the space sooner. Reads never see them:
  // every element read goes through a live metadata record's version.
  for (int i = 0; i < kNumElementCfs; ++i) {
    s_->batch.batch()->DeleteRange(impl_.element_cf(static_cast<ElementCf>(i)), begin, end);
  }
  s_->flushed |= 1u << db;
  s_->written_at_flush[db] = s_->written.n;
}

namespace {

// An iterator over [lower, upper) that owns its bounds and read options (RocksDB keeps
// pointers to them) and stops at `upper`.
class BoundedIterator : public rocksdb::Iterator {
 public:
  // masked: the stored data is hidden (the base iterates an empty range).
  BoundedIterator(std::string_view lower, std::string_view upper, bool masked,
                  const rocksdb::Snapshot* snapshot)
      : lower_(lower), upper_(upper), lower_slice_(lower_), upper_slice_(upper_) {
    base_ro_.iterate_lower_bound = &lower_slice_;
    base_ro_.iterate_upper_bound = masked ? &lower_slice_ : &upper_slice_;
    base_ro_.snapshot = snapshot;
  }
  const rocksdb::ReadOptions& base_read_options() const { return base_ro_; }
  void set(rocksdb::Iterator* it) { it_.reset(it); }

  bool Valid() const override {
    return it_->Valid() && it_->key().compare(upper_slice_) < 0 &&
           it_->key().compare(lower_slice_) >= 0;
  }
  void SeekToFirst() override { it_->Seek(lower_slice_); }
  void SeekToLast() override {
    it_->SeekForPrev(upper_slice_);  // the greatest key <= upper; upper itself is excluded
    if (it_->Valid() && it_->key().compare(upper_slice_) >= 0) it_->Prev();
  }
  void Seek(const rocksdb::Slice& target) override {
    it_->Seek(target.compare(lower_slice_) < 0 ? lower_slice_ : target);
  }
  void SeekForPrev(const rocksdb::Slice& target) override { it_->SeekForPrev(target); }
  void Next() override { it_->Next(); }
  void Prev() override { it_->Prev(); }
  rocksdb::Slice key() const override { return it_->key(); }
  rocksdb::Slice value() const override { return it_->value(); }
  rocksdb::Status status() const override { return it_->status(); }

 private:
  std::string lower_, upper_;
  rocksdb::Slice lower_slice_, upper_slice_;
  rocksdb::ReadOptions base_ro_;  // the stored data's iterator's (RocksDB keeps a pointer)
  std::unique_ptr<rocksdb::Iterator> it_;
};

}  // namespace

std::unique_ptr<rocksdb::Iterator> Txn::NewIterator(rocksdb::ColumnFamilyHandle* cf,
                                                    std::string_view lower,
                                                    std::string_view upper) {
  if (snapshot_deferred_) ResolveSnapshot(nullptr);
  FlushPending();
  // A db emptied in this unit: the stored keys are gone, only the batch's own entries count.
  const bool masked = cf == impl_.db()->DefaultColumnFamily() && DbFlushed(lower);
  auto it = std::make_unique<BoundedIterator>(lower, upper, masked, snapshot_);
  rocksdb::Iterator* base = impl_.db()->NewIterator(it->base_read_options(), cf);
  it->set(s_->batch.NewIteratorWithBase(cf->GetID(), base, lower, upper).release());
  return it;
}

int64_t Txn::expired_found() const { return static_cast<int64_t>(s_->expired.n); }
size_t Txn::written_count() const { return s_->written.n; }
std::string_view Txn::written_key(size_t i) const { return s_->written.slots[i]; }
uint32_t Txn::flushed_dbs() const { return s_->flushed; }

namespace {

// Positions [0, list.n) sorted by (hash, key, position): a commit group's unit holds a whole
// round's keys, so lookups among them must not be linear. Only grouping and lookup use the
// order, so it need not be the keys' byte order.
void SortPositions(const KeyList& list, std::vector<uint32_t>* out) {
  out->resize(list.n);
  for (uint32_t i = 0; i < list.n; ++i) (*out)[i] = i;
  std::sort(out->begin(), out->end(), [&](uint32_t a, uint32_t b) {
    if (list.hashes[a] != list.hashes[b]) return list.hashes[a] < list.hashes[b];
    const int cmp = list.slots[a].compare(list.slots[b]);
    return cmp != 0 ? cmp < 0 : a < b;
  });
}

// The first position of key (whose hash is `hash`) in positions sorted by SortPositions, or -1.
int64_t FirstPosition(const KeyList& list, const std::vector<uint32_t>& sorted,
                      std::string_view key, uint64_t hash) {
  auto it =
      std::lower_bound(sorted.begin(), sorted.end(), key, [&](uint32_t i, std::string_view k) {
        return list.hashes[i] != hash ? list.hashes[i] < hash : list.slots[i] < k;
      });
  if (it == sorted.end() || list.hashes[*it] != hash || list.slots[*it] != key) return -1;
  return static_cast<int64_t>(*it);
}

}  // namespace

// Needs s_->read_order (ComputeCountChanges).
Status Txn::StoredCounts(const std::string& raw_key, uint64_t hash, size_t first, KeyCounts* out,
                         int64_t* expire_at_ms) {
  // The key's first read; a read noted before the key's first write saw what it replaces (reads
  // later than that are after a write, and so are all reads after them).
  const int64_t i = FirstPosition(s_->reads, s_->read_order, raw_key, hash);
  if (i >= 0 && s_->read_notes[i].written_n <= first) {
    *out = s_->read_notes[i].counts;
    *expire_at_ms = s_->read_notes[i].expire_at_ms;
    return Status::Ok();
  }
  // A blind write (SET, MSET, RENAME's target...): one point read of what it replaces. The
  // caller holds the key's lock, so it stays what the write replaces.
  bool found = false;
  s_->read_valid = false;
  s_->read.Reset();
  if (Status st = impl_.ReadRaw(raw_key, &s_->read, &found); !st.ok()) return st;
  std::optional<int64_t> expiry;
  if (found) expiry = DecodeExpiry(s_->read.ToStringView());
  *out = KeyCounts{found ? 1 : 0, expiry && *expiry != kNoExpiry ? 1 : 0};
  *expire_at_ms = expiry ? *expiry : kNoExpiry;
  return Status::Ok();
}

void Txn::HandExpiry(const std::string& raw_key, int64_t at_ms) {
  s_->hand_keys.push_back(&raw_key);
  s_->hand_at_ms.push_back(at_ms);
}

bool Txn::Wrote(std::string_view raw_key) const {
  return FirstPosition(s_->written, s_->order, raw_key, HashKey(raw_key)) >= 0;
}

// Each distinct written key counts once: its last write is its state after the unit, what was
// stored before its first write its state before. Keys written only before their database was
// emptied in the unit are gone; an emptied database's count is what the unit wrote after.
//
// Also lists the keys whose expiry the commit hands to the expiry cycle (hand_keys): each key
// whose last write gives it an expiry, unless what was stored before had one at or before it.
// That stored value's own coverage (its write's entry, or the pass that saw it) then covers the
// new expiry: when due, the cycle reads the key, finds it live and keeps it due (RemoveExpired).
// So a limiter key taken again and again hands nothing after its first take.
Status Txn::ComputeCountChanges(CountChanges* c) {
  s_->hand_keys.clear();
  s_->hand_at_ms.clear();
  auto& order = s_->order;
  const KeyList& written = s_->written;
  SortPositions(written, &order);
  SortPositions(s_->reads, &s_->read_order);
  for (size_t g = 0; g < order.size();) {
    size_t e = g + 1;
    while (e < order.size() && written.Same(order[e], order[g])) ++e;
    const std::string& key = written.slots[order[g]];
    const uint64_t hash = written.hashes[order[g]];
    // The key's first and last writes (a Touch writes nothing).
    int64_t first = -1, last = -1;
    for (size_t j = g; j < e; ++j) {
      if (s_->ops[order[j]] == kTouched) continue;
      if (first < 0) first = order[j];
      last = order[j];
    }
    g = e;
    if (first < 0) continue;
    const int db = DbOf(key);
    if (db < 0 || db >= kNumDatabases) continue;
    const KeyCounts after = CountsAfter(s_->ops[last]);
    const int64_t after_expiry = s_->put_expiry[last];
    if ((s_->flushed & (1u << db)) != 0) {
      if (static_cast<size_t>(last) >= s_->written_at_flush[db]) {
        c->delta[db] += after;
        if (s_->ops[last] == kPutExpiring) HandExpiry(key, after_expiry);
      }
      continue;
    }
    KeyCounts before;
    int64_t before_expiry = kNoExpiry;
    if (Status st = StoredCounts(key, hash, first, &before, &before_expiry); !st.ok()) return st;
    c->delta[db] += KeyCounts{after.keys - before.keys, after.expires - before.expires};
    if (s_->ops[last] == kPutExpiring && !(before.expires == 1 && before_expiry <= after_expiry)) {
      HandExpiry(key, after_expiry);
    }
  }
  for (size_t i = 0; i < s_->expired.n; ++i) {  // removed by Commit: stored, with an expiry
    const std::string& k = s_->expired.slots[i];
    const int db = DbOf(k);
    if (db < 0 || db >= kNumDatabases || DbFlushed(k) || Wrote(k)) continue;
    c->delta[db] += KeyCounts{-1, -1};
  }
  c->absolute = s_->flushed;
  for (int db = 0; db < kNumDatabases; ++db) {
    if ((c->absolute & (1u << db)) != 0 || c->delta[db] != KeyCounts{}) c->changed |= 1u << db;
  }
  return Status::Ok();
}

void Txn::StageCountChanges(const CountChanges& c) {
  rocksdb::WriteBatch* wb = s_->batch.batch();
  for (int db = 0; db < kNumDatabases; ++db) {
    if ((c.changed & (1u << db)) == 0) continue;
    char buf[16];
    EncodeCounts(c.delta[db], buf);
    const std::string_view key = CountRecordKey(db);
    const rocksdb::Slice k(key.data(), key.size());
    const rocksdb::Slice v(buf, sizeof(buf));
    // Not indexed: the unit never reads the meta column family through its batch.
    if ((c.absolute & (1u << db)) != 0) {
      wb->Put(impl_.meta_cf(), k, v);
    } else {
      wb->Merge(impl_.meta_cf(), k, v);
    }
  }
}

void Txn::ApplyCountChanges(const CountChanges& c) {
  for (int db = 0; db < kNumDatabases; ++db) {
    if ((c.changed & (1u << db)) == 0) continue;
    if ((c.absolute & (1u << db)) != 0) {
      impl_.counts().Set(db, c.delta[db]);
    } else {
      impl_.counts().Add(db, c.delta[db]);
    }
  }
}

Result<KeyCounts> Txn::CountsWithStaged(int db) {
  KeyCounts counts = impl_.counts().Get(db);
  if (s_->written.n == 0 && s_->expired.n == 0 && s_->flushed == 0) return counts;
  CountChanges c;
  if (Status st = ComputeCountChanges(&c); !st.ok()) return st;
  if ((c.absolute & (1u << db)) != 0) return c.delta[db];
  counts += c.delta[db];
  return counts;
}

// The count records change in the same RocksDB write as the keys (crash-consistent); the
// in-memory counts once that write is applied (visible), even if its flush then failed.
Status Txn::Commit(bool durable, bool defer_durability) {
  FlushPending();
  DropMark();
  CountChanges changes;
  if (s_->written.n > 0 || s_->expired.n > 0 || s_->flushed != 0) {
    Status st = ComputeCountChanges(&changes);
    if (!st.ok()) {
      s_->Reset();
      return st;
    }
  }
  // Not indexed (as the count records): nothing reads through the batch after this.
  rocksdb::WriteBatch* wb = s_->batch.batch();
  for (size_t i = 0; i < s_->expired.n; ++i) {  // ComputeCountChanges ran: Wrote() works
    const std::string& k = s_->expired.slots[i];
    if (!Wrote(k)) wb->Delete(rocksdb::Slice(k));
  }
  StageCountChanges(changes);
  // A unit that only removes expired values (a read that found them) never waits for an fsync
  // and never fails: losing or refusing such a removal changes nothing anyone can see.
  const bool only_removals = s_->written.n == 0 && s_->flushed == 0;
  bool applied = false;
  Status s = impl_.Write(wb, durable && !only_removals, defer_durability, &applied);
  if (applied) {
    ApplyCountChanges(changes);
    // Marked while the stripes are held, with a sequence number that covers this write.
    // Handed once the write is visible, with the mark that covers it (ExpiryIntake). Without
    // stripes there is no mark: the pass hint (NoteExpiry) instead, noted once the write is
    // visible, so that a pass that begins after it sees the value (its iterators are made
    // later), and one that began before it keeps the note.
    const size_t hand_n = s_->hand_keys.size();
    if (locks_ != nullptr) {
      const uint64_t mark = impl_.db()->GetLatestSequenceNumber();
      locks_->MarkWritten(mark);
      if (hand_n > 0) impl_.HandExpiries(s_->hand_keys.data(), s_->hand_at_ms.data(), hand_n, mark);
    } else {
      for (size_t i = 0; i < hand_n; ++i) impl_.NoteExpiry(s_->hand_at_ms[i]);
    }
  }
  if (!s.ok() && only_removals) s = Status::Ok();
  if (s.ok()) {
    if (s_->expired.n > 0) impl_.AddExpired(static_cast<int64_t>(s_->expired.n));
    if (s_->written.n > 0 || s_->flushed != 0) impl_.NotifyCommit(*this);
  }
  s_->Reset();
  return s;
}

void Txn::Rollback() {
  DropMark();
  s_->Reset();
  conflicted_ = false;
}

void Txn::DropMark() {
  if (!marked_) return;
  s_->batch.PopSavePoint().PermitUncheckedError();  // NotFound once the batch was cleared
  marked_ = false;
}

void Txn::Retime(UnitTime now) {
  s_->read_valid = false;  // the next member's reads are its own
  if (now.ns <= now_ns_) return;
  now_ns_ = now.ns;
  now_ms_ = now.ns / 1'000'000;
}

void Txn::SetMark() {
  s_->read_valid = false;
  conflicted_ = false;
  // Nothing staged, noted or emptied since the mark: it already marks this state. The common
  // case: a group member joins right after the previous member's commit moved the mark, and
  // leaves having committed; moving the savepoint costs two RocksDB calls per member.
  if (marked_ && !s_->pending && !StagedSinceMark() && s_->reads.n == s_->mark.reads_n) return;
  FlushPending();  // a member's writes are in the batch before the group's savepoint moves on
  DropMark();
  s_->batch.SetSavePoint();
  marked_ = true;
  Scratch::Mark& m = s_->mark;
  m.expired_n = s_->expired.n;
  m.written_n = s_->written.n;
  m.reads_n = s_->reads.n;
  m.flushed = s_->flushed;
  m.batch_count = s_->batch.Count();
  std::copy(std::begin(s_->written_at_flush), std::end(s_->written_at_flush),
            std::begin(m.written_at_flush));
}

void Txn::AdvanceMark() { SetMark(); }

void Txn::RollbackToMark() {
  if (!marked_) return Rollback();
  s_->read_valid = false;
  s_->pending = false;  // staged after the mark (SetMark flushes)
  if (s_->batch.Count() != s_->mark.batch_count) {
    // Rebuilds the index from the records left: only a failed member (a lock conflict, a
    // script error) gets here.
    s_->batch.RollbackToSavePoint().PermitUncheckedError();
    marked_ = false;
  }
  const Scratch::Mark& m = s_->mark;
  s_->expired.n = m.expired_n;
  s_->written.n = m.written_n;
  s_->reads.n = m.reads_n;
  s_->flushed = m.flushed;
  std::copy(std::begin(m.written_at_flush), std::end(m.written_at_flush),
            std::begin(s_->written_at_flush));
  SetMark();
}

bool Txn::StagedSinceMark() const {
  return s_->batch.Count() != s_->mark.batch_count || s_->written.n != s_->mark.written_n ||
         s_->expired.n != s_->mark.expired_n || s_->flushed != s_->mark.flushed;
}

size_t Txn::staged_bytes() const {
  return s_->batch.DataSize() +
         (s_->pending ? s_->pending_key.size() + s_->pending_value.size() : 0);
}

}  // namespace sluice::internal
