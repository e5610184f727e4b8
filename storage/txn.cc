#include "txn.h"

#include <algorithm>
#include <limits>

namespace sluice::internal {

namespace {
// Key lists longer than this (a many-key command) are given back after the Txn.
constexpr size_t kKeepKeySlots = 64;
// Scratch objects a thread keeps for reuse (one per unit alive at once on that thread).
constexpr size_t kKeepScratch = 4;

// A list of keys kept in reused strings: clearing it keeps every string's capacity.
struct KeyList {
  std::vector<std::string> slots;
  size_t n = 0;
  void Add(std::string_view k) {
    if (n == slots.size()) slots.emplace_back();
    slots[n++].assign(k);
  }
  bool Contains(std::string_view k, size_t from = 0) const {
    const auto end = slots.begin() + static_cast<std::ptrdiff_t>(n);
    return std::find(slots.begin() + static_cast<std::ptrdiff_t>(from), end, k) != end;
  }
  void Trim() {
    if (slots.size() > kKeepKeySlots) {  // a many-key command (MSET): not kept
      std::vector<std::string>().swap(slots);
    } else {
      for (size_t i = 0; i < n; ++i) TrimScratch(&slots[i]);
    }
    n = 0;
  }
};

int DbOf(std::string_view raw_key) {
  return raw_key.empty() ? -1 : static_cast<unsigned char>(raw_key[0]);
}

// What a slot of the written list did to its key in the default column family.
enum WriteOp : uint8_t { kTouched = 0, kPutPersistent = 1, kPutExpiring = 2, kDeleted = 3 };

KeyCounts CountsAfter(uint8_t op) {
  return KeyCounts{op == kPutPersistent || op == kPutExpiring ? 1 : 0, op == kPutExpiring ? 1 : 0};
}

// Scratch::min_expiry when the unit staged no expiry.
constexpr int64_t kNoteNone = std::numeric_limits<int64_t>::max();

// A key's stored state as a locked read found it, and how many slots the written list had then
// (a note is the stored state only for a key first written at a later slot).
struct ReadNote {
  KeyCounts counts;
  size_t written_n = 0;
};

}  // namespace

struct Txn::Scratch {
  rocksdb::WriteBatchWithIndex batch{rocksdb::BytewiseComparator(), 0, /*overwrite_key=*/true};
  rocksdb::PinnableSlice read;
  std::string value;                 // an encoded value on its way into the batch
  KeyList expired;                   // expired values Read found, each once
  KeyList written;                   // keys this txn wrote or touched, in order (repeats allowed)
  std::vector<uint8_t> ops;          // ops[i]: what written.slots[i] did (WriteOp)
  KeyList reads;                     // keys read from the store under their lock...
  std::vector<ReadNote> read_notes;  // ...and what was stored (parallel to reads)
  std::vector<uint32_t> order;       // ComputeCountChanges's scratch
  int64_t min_expiry = kNoteNone;    // the earliest expiry Put staged (for NoteExpiry)
  uint32_t flushed = 0;              // bit d: DeleteDb(d) ran in this unit
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
    // Clearing rebuilds the index's arena: only worth it when something was staged (a read-only
    // unit, the common case, stages nothing).
    if (batch.GetWriteBatch()->Count() > 0) batch.Clear();
    read.Reset();
    expired.n = 0;
    written.n = 0;
    reads.n = 0;
    min_expiry = kNoteNone;
    flushed = 0;
  }
  void Trim() {
    read.Reset();
    TrimScratch(read.GetSelf());
    TrimScratch(&value);
    if (batch.GetWriteBatch()->GetDataSize() > kScratchKeepBytes) {
      batch = rocksdb::WriteBatchWithIndex(rocksdb::BytewiseComparator(), 0, true);
    }
    expired.Trim();
    written.Trim();
    reads.Trim();
    if (ops.size() > kKeepKeySlots) std::vector<uint8_t>().swap(ops);
    if (read_notes.size() > kKeepKeySlots) std::vector<ReadNote>().swap(read_notes);
    if (order.size() > kKeepKeySlots) std::vector<uint32_t>().swap(order);
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
    txn_.snapshot_ = txn_.impl_.db()->GetSnapshot();
  }
}

Txn::SnapshotReads::~SnapshotReads() {
  if (txn_.snapshot_ != nullptr) txn_.impl_.db()->ReleaseSnapshot(txn_.snapshot_);
  txn_.snapshot_ = nullptr;
}

Status Txn::GetRaw(rocksdb::ColumnFamilyHandle* cf, std::string_view key, std::string* value,
                   bool* found) {
  rocksdb::PinnableSlice slice(value);
  *found = false;
  rocksdb::ReadOptions ro;
  ro.snapshot = snapshot_;
  rocksdb::Status s;
  if (s_->batch.GetWriteBatch()->Count() == 0) {
    s = impl_.db()->Get(ro, cf, rocksdb::Slice(key.data(), key.size()), &slice);
  } else {
    s = s_->batch.GetFromBatchAndDB(impl_.db(), ro, cf, rocksdb::Slice(key.data(), key.size()),
                                    &slice);
  }
  if (s.IsNotFound()) return Status::Ok();
  if (!s.ok()) return FromRocks(s);
  // Unpinned, the value was copied into *value (the slice's buffer) already.
  if (slice.IsPinned()) value->assign(slice.data(), slice.size());
  *found = true;
  return Status::Ok();
}

Result<std::optional<EntryView>> Txn::ReadView(const std::string& raw_key) {
  rocksdb::PinnableSlice* read = &s_->read;
  read->Reset();
  bool found = false;
  const rocksdb::Slice key(raw_key);
  const bool flushed = DbFlushed(raw_key);
  if (flushed) {
    // The db was emptied in this unit: only what the unit wrote there since counts.
    if (!s_->written.Contains(raw_key, s_->written_at_flush[DbOf(raw_key)])) {
      return std::optional<EntryView>();
    }
    std::unique_ptr<rocksdb::WBWIIterator> it(s_->batch.NewIterator());
    it->Seek(key);
    if (it->Valid() && it->Entry().key == key && it->Entry().type == rocksdb::kPutRecord) {
      read->PinSelf(it->Entry().value);
      found = true;
    }
  } else if (s_->batch.GetWriteBatch()->Count() == 0 || NotStaged(raw_key)) {
    Status st = impl_.ReadRaw(raw_key, read, &found, snapshot_);
    if (!st.ok()) return st;
  } else {
    rocksdb::ReadOptions ro;
    ro.snapshot = snapshot_;
    auto s = s_->batch.GetFromBatchAndDB(impl_.db(), ro, key, read);
    if (!s.ok() && !s.IsNotFound()) return FromRocks(s);
    found = s.ok();
  }
  if (!found) {
    if (!flushed) NoteRead(raw_key, nullptr);
    return std::optional<EntryView>();
  }
  auto view = DecodeValue(read->ToStringView());
  if (!view) return Status::Corruption("invalid value encoding");
  if (!flushed) NoteRead(raw_key, &*view);
  if (!IsExpired(view->expire_at_ms, now_ms_)) return std::optional<EntryView>(*view);
  if (!s_->expired.Contains(raw_key) &&
      (MayRemoveExpired(raw_key) || (!flushed && TakeExpired(raw_key)))) {
    s_->expired.Add(raw_key);
  }
  return std::optional<EntryView>();
}

// Whether the batch surely holds no entry for raw_key in the default column family: every write
// there goes through Put/Delete (noted in `written`) or DeleteDb (checked before). A short scan
// of the noted keys is much cheaper than searching the batch's index (a commit group's batch
// holds many commands' writes).
bool Txn::NotStaged(std::string_view raw_key) const {
  constexpr size_t kMaxScan = 32;
  return s_->written.n <= kMaxScan && !s_->written.Contains(raw_key);
}

Result<std::optional<Entry>> Txn::Read(const std::string& raw_key) {
  auto view = ReadView(raw_key);
  if (!view.ok()) return view.status();
  if (!view->has_value()) return std::optional<Entry>();
  const EntryView& v = **view;
  return std::optional<Entry>(Entry{v.kind, v.expire_at_ms, std::string(v.payload)});
}

void Txn::NoteWritten(std::string_view raw_key, uint8_t op) {
  s_->written.Add(raw_key);
  if (s_->ops.size() < s_->written.n) s_->ops.resize(s_->written.n);
  s_->ops[s_->written.n - 1] = op;
}

bool Txn::TakeExpired(const std::string& raw_key) {
  if (locks_ == nullptr || !locks_->TryAcquire(raw_key)) return false;
  // Locked now: what is stored may have been rewritten since the unlocked read.
  bool found = false;
  s_->read.Reset();
  if (!impl_.ReadRaw(raw_key, &s_->read, &found).ok() || !found) return false;
  auto expiry = DecodeExpiry(s_->read.ToStringView());
  return expiry && IsExpired(*expiry, now_ms_);
}

void Txn::NoteRead(std::string_view raw_key, const EntryView* v) {
  if (!MayRemoveExpired(raw_key)) return;  // not under its lock: may change before a write
  s_->reads.Add(raw_key);
  if (s_->read_notes.size() < s_->reads.n) s_->read_notes.resize(s_->reads.n);
  const KeyCounts counts{v != nullptr ? 1 : 0,
                         v != nullptr && v->expire_at_ms != kNoExpiry ? 1 : 0};
  s_->read_notes[s_->reads.n - 1] = ReadNote{counts, s_->written.n};
}

void Txn::Put(const std::string& raw_key, ValueKind kind, int64_t expire_at_ms,
              std::string_view payload) {
  // [header][payload] (EncodeValue) assembled in a reused buffer, then copied into the batch.
  char header[kMaxValueHeader];
  const size_t n = EncodeValueHeader(kind, expire_at_ms, header);
  s_->value.assign(header, n);
  s_->value.append(payload);
  s_->batch.Put(rocksdb::Slice(raw_key), rocksdb::Slice(s_->value));
  NoteWritten(raw_key, expire_at_ms != kNoExpiry ? kPutExpiring : kPutPersistent);
  if (expire_at_ms != kNoExpiry) s_->min_expiry = std::min(s_->min_expiry, expire_at_ms);
}

void Txn::RemoveExpired(std::string_view raw_key) { s_->expired.Add(raw_key); }

void Txn::Delete(const std::string& raw_key) {
  s_->batch.Delete(rocksdb::Slice(raw_key));
  NoteWritten(raw_key, kDeleted);
}

void Txn::Touch(std::string_view raw_key) { NoteWritten(raw_key, kTouched); }

void Txn::PutRaw(rocksdb::ColumnFamilyHandle* cf, std::string_view key, std::string_view value) {
  s_->batch.Put(cf, rocksdb::Slice(key.data(), key.size()),
                rocksdb::Slice(value.data(), value.size()));
}

void Txn::DeleteRaw(rocksdb::ColumnFamilyHandle* cf, std::string_view key) {
  s_->batch.Delete(cf, rocksdb::Slice(key.data(), key.size()));
}

void Txn::DeleteDb(int db) {
  const std::string begin = DbPrefix(db);
  const std::string end = DbEnd(db);
  // Keys the unit already wrote in the db are deleted in the index too, so the unit's own reads
  // and iterators stop seeing them; the range deletion then covers what is stored.
  std::vector<std::string> staged;
  {
    std::unique_ptr<rocksdb::WBWIIterator> it(s_->batch.NewIterator());
    for (it->Seek(begin); it->Valid() && it->Entry().key.compare(end) < 0; it->Next()) {
      staged.emplace_back(it->Entry().key.ToString());
    }
  }
  for (const auto& k : staged) s_->batch.Delete(rocksdb::Slice(k));
  // WriteBatchWithIndex cannot index a range deletion: it goes into the underlying batch, in
  // order, and DbFlushed() masks the stored keys for this unit's reads.
  s_->batch.GetWriteBatch()->DeleteRange(begin, end);
  // Elements of the db's collections are stale once their metadata is gone (the element filter
  // would drop them); deleting their ranges reclaims the space sooner. Reads never see them:
  // every element read goes through a live metadata record's version.
  for (int i = 0; i < kNumElementCfs; ++i) {
    s_->batch.GetWriteBatch()->DeleteRange(impl_.element_cf(static_cast<ElementCf>(i)), begin, end);
  }
  s_->flushed |= 1u << db;
  s_->written_at_flush[db] = s_->written.n;
}

namespace {

// An iterator over [lower, upper) that owns its bounds and read options (RocksDB keeps
// pointers to them) and stops at `upper` even where the batch's delta has entries past it.
class BoundedIterator : public rocksdb::Iterator {
 public:
  // masked: the stored data is hidden (the base iterates an empty range).
  BoundedIterator(std::string_view lower, std::string_view upper, bool masked,
                  const rocksdb::Snapshot* snapshot)
      : lower_(lower), upper_(upper), lower_slice_(lower_), upper_slice_(upper_) {
    ro_.iterate_lower_bound = &lower_slice_;
    ro_.iterate_upper_bound = &upper_slice_;
    ro_.snapshot = snapshot;
    base_ro_ = ro_;
    if (masked) base_ro_.iterate_upper_bound = &lower_slice_;
  }
  const rocksdb::ReadOptions* read_options() const { return &ro_; }
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
  rocksdb::ReadOptions ro_;       // the merged iterator's (RocksDB keeps a pointer)
  rocksdb::ReadOptions base_ro_;  // the stored data's iterator's
  std::unique_ptr<rocksdb::Iterator> it_;
};

}  // namespace

std::unique_ptr<rocksdb::Iterator> Txn::NewIterator(rocksdb::ColumnFamilyHandle* cf,
                                                    std::string_view lower,
                                                    std::string_view upper) {
  // A db emptied in this unit: the stored keys are gone, only the batch's own entries count.
  const bool masked = cf == impl_.db()->DefaultColumnFamily() && DbFlushed(lower);
  auto it = std::make_unique<BoundedIterator>(lower, upper, masked, snapshot_);
  rocksdb::Iterator* base = impl_.db()->NewIterator(it->base_read_options(), cf);
  it->set(s_->batch.NewIteratorWithBase(cf, base, it->read_options()));
  return it;
}

int64_t Txn::expired_found() const { return static_cast<int64_t>(s_->expired.n); }
size_t Txn::written_count() const { return s_->written.n; }
std::string_view Txn::written_key(size_t i) const { return s_->written.slots[i]; }
uint32_t Txn::flushed_dbs() const { return s_->flushed; }

Status Txn::StoredCounts(const std::string& raw_key, size_t first, KeyCounts* out) {
  for (size_t i = 0; i < s_->reads.n; ++i) {
    if (s_->read_notes[i].written_n <= first && s_->reads.slots[i] == raw_key) {
      *out = s_->read_notes[i].counts;
      return Status::Ok();
    }
  }
  // A blind write (SET, MSET, RENAME's target...): one point read of what it replaces. The
  // caller holds the key's lock, so it stays what the write replaces.
  bool found = false;
  s_->read.Reset();
  if (Status st = impl_.ReadRaw(raw_key, &s_->read, &found); !st.ok()) return st;
  std::optional<int64_t> expiry;
  if (found) expiry = DecodeExpiry(s_->read.ToStringView());
  *out = KeyCounts{found ? 1 : 0, expiry && *expiry != kNoExpiry ? 1 : 0};
  return Status::Ok();
}

// Each distinct written key counts once: its last write is its state after the unit, what was
// stored before its first write its state before. Keys written only before their database was
// emptied in the unit are gone; an emptied database's count is what the unit wrote after.
Status Txn::ComputeCountChanges(CountChanges* c) {
  auto& order = s_->order;
  order.clear();
  const auto& slots = s_->written.slots;
  for (uint32_t i = 0; i < s_->written.n; ++i) {
    if (s_->ops[i] != kTouched) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const int cmp = slots[a].compare(slots[b]);
    return cmp != 0 ? cmp < 0 : a < b;
  });
  for (size_t g = 0; g < order.size();) {
    size_t e = g + 1;
    while (e < order.size() && slots[order[e]] == slots[order[g]]) ++e;
    const std::string& key = slots[order[g]];
    const uint32_t first = order[g];
    const uint32_t last = order[e - 1];
    g = e;
    const int db = DbOf(key);
    if (db < 0 || db >= kNumDatabases) continue;
    const KeyCounts after = CountsAfter(s_->ops[last]);
    if ((s_->flushed & (1u << db)) != 0) {
      if (last >= s_->written_at_flush[db]) c->delta[db] += after;
      continue;
    }
    KeyCounts before;
    if (Status st = StoredCounts(key, first, &before); !st.ok()) return st;
    c->delta[db] += KeyCounts{after.keys - before.keys, after.expires - before.expires};
  }
  for (size_t i = 0; i < s_->expired.n; ++i) {  // removed by Commit: stored, with an expiry
    const std::string& k = s_->expired.slots[i];
    const int db = DbOf(k);
    if (db < 0 || db >= kNumDatabases || DbFlushed(k) || s_->written.Contains(k)) continue;
    c->delta[db] += KeyCounts{-1, -1};
  }
  c->absolute = s_->flushed;
  for (int db = 0; db < kNumDatabases; ++db) {
    if ((c->absolute & (1u << db)) != 0 || c->delta[db] != KeyCounts{}) c->changed |= 1u << db;
  }
  return Status::Ok();
}

void Txn::StageCountChanges(const CountChanges& c) {
  rocksdb::WriteBatch* wb = s_->batch.GetWriteBatch();
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
  rocksdb::WriteBatch* wb = s_->batch.GetWriteBatch();
  for (size_t i = 0; i < s_->expired.n; ++i) {
    const std::string& k = s_->expired.slots[i];
    if (!s_->written.Contains(k)) wb->Delete(rocksdb::Slice(k));
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
    if (locks_ != nullptr) locks_->MarkWritten(impl_.db()->GetLatestSequenceNumber());
    // Noted once the write is visible: an expiry pass that begins after the note will see the
    // value (its iterators are made later), and one that began before it keeps the note.
    if (s_->min_expiry != kNoteNone) impl_.NoteExpiry(s_->min_expiry);
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
  if (now.ns <= now_ns_) return;
  now_ns_ = now.ns;
  now_ms_ = now.ns / 1'000'000;
}

void Txn::SetMark() {
  DropMark();
  s_->batch.SetSavePoint();
  marked_ = true;
  Scratch::Mark& m = s_->mark;
  m.expired_n = s_->expired.n;
  m.written_n = s_->written.n;
  m.reads_n = s_->reads.n;
  m.flushed = s_->flushed;
  m.batch_count = s_->batch.GetWriteBatch()->Count();
  std::copy(std::begin(s_->written_at_flush), std::end(s_->written_at_flush),
            std::begin(m.written_at_flush));
  conflicted_ = false;
}

void Txn::AdvanceMark() { SetMark(); }

void Txn::RollbackToMark() {
  if (!marked_) return Rollback();
  if (StagedSinceMark()) {
    // Rebuilds the index: costly, but only a failed member (a lock conflict, a script error)
    // gets here.
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
  return s_->batch.GetWriteBatch()->Count() != s_->mark.batch_count ||
         s_->written.n != s_->mark.written_n || s_->expired.n != s_->mark.expired_n ||
         s_->flushed != s_->mark.flushed;
}

size_t Txn::staged_bytes() const { return s_->batch.GetWriteBatch()->GetDataSize(); }

}  // namespace sluice::internal
