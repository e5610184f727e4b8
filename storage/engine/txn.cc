#include "txn.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "forwarding_iterator.h"
#include "indexed_batch.h"
#include "store_impl.h"
#include "txn_scratch.h"

namespace sluice::internal {

using namespace txn_detail;  // NOLINT: the Txn's own helpers (txn_scratch.h)

namespace {
// Scratch objects a thread keeps for reuse (one per unit alive at once on that thread).
constexpr size_t kKeepScratch = 4;
constexpr uint64_t kMaxSequence = std::numeric_limits<uint64_t>::max();
// An element record's key in the record cache starts with this byte, then its column family's
// id: a key of the default family starts with its database (< kNumDatabases).
constexpr char kElementCacheTag = '\xff';
// The record cache's slots (Store::Impl's kRecordCacheSlots): the lock stripes for the default
// family's records, then the element versions' buckets, then the collection keys' stripes, whose
// Want is the element reads' first gate.
constexpr size_t kElementSlots = LockPool::kStripes;
constexpr size_t kOwnerSlots = kElementSlots + ElementVersions::kBuckets;
static_assert(kOwnerSlots + LockPool::kStripes == Store::Impl::kRecordCacheSlots);

// A stored record read through the record cache (record_cache.h has the contract): the slot's
// write version (version_of) is read before the sequence number the fill covers, and that
// before the record (read_stored, which sets *read and *found, and *deep when RocksDB's whole
// read answered, past the newest memtable); key_of() gives the record's key in the cache. A
// slot never wanted costs one relaxed load; the first read there that comes from a table file
// (a pinned value: a memtable's is copied), or the second deep read in a row of one key that
// has no record, marks it (deep == nullptr: absences are never cached). hash_of():
// RecordCache::Hash(key_of()), which the caller may have at hand. keep(record): whether a record
// may be cached.
template <typename KeyOf, typename HashOf, typename VersionOf, typename ReadStored, typename Keep>
Status ReadThroughCache(RecordCache& cache, size_t slot, KeyOf key_of, HashOf hash_of,
                        const rocksdb::Snapshot* snapshot, rocksdb::DB* db, VersionOf version_of,
                        ReadStored read_stored, Keep keep, rocksdb::PinnableSlice* read,
                        bool* found, const bool* deep) {
  if (!cache.Interesting(slot)) {
    if (Status st = read_stored(); !st.ok()) return st;
    if (*found && read->IsPinned()) {  // from a table file: fill if read there again
      cache.Want(slot);
      cache.ReadAgain(slot, hash_of());
    } else if (!*found && deep != nullptr && *deep && cache.ReadAgain(slot, hash_of())) {
      cache.Want(slot);  // missing twice in a row: worth remembering from the next read
    }
    return Status::Ok();
  }
  const uint64_t version = version_of();
  if ((version & 1) != 0) return read_stored();  // a write in flight
  const uint64_t visible =
      snapshot == nullptr ? kMaxSequence : static_cast<uint64_t>(snapshot->GetSequenceNumber());
  read->Reset();
  const std::string_view cache_key = key_of();
  bool absent = false;
  if (cache.Lookup(slot, cache_key, version, visible, read->GetSelf(), &absent)) {
    *found = !absent;
    if (*found) read->PinSelf();
    return Status::Ok();
  }
  const uint64_t fill_seq = db->GetLatestSequenceNumber();
  if (Status st = read_stored(); !st.ok()) return st;
  if (visible < fill_seq) return Status::Ok();
  if (*found && read->IsPinned() && keep(read->ToStringView()) &&
      cache.ReadAgain(slot, hash_of())) {
    cache.Insert(slot, cache_key, version, fill_seq, read->ToStringView());
  } else if (!*found && deep != nullptr && *deep && cache.ReadAgain(slot, hash_of())) {
    cache.InsertAbsent(slot, cache_key, version, fill_seq);
  }
  return Status::Ok();
}

}  // namespace

using ScratchList = FreeList<Txn::Scratch, kKeepScratch>;

Txn::Txn(Store::Impl& impl, UnitTime now)
    : impl_(impl), now_ns_(now.ns), now_ms_(now.ns / 1'000'000), s_(ScratchList::Acquire()) {
  s_->Reset();
}

Txn::Txn(Store::Impl& impl) : Txn(impl, UnitTime{impl.clock().NowNs()}) {}

Txn::~Txn() {
  ReleaseKeptSnapshot();
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
  if (txn_.snapshot_ != nullptr) {
    txn_.ReleaseKeptSnapshot();  // none unless TakeSnapshot found it stale and replaced it
    txn_.kept_snapshot_ = txn_.snapshot_;
  }
  txn_.snapshot_ = nullptr;
  txn_.snapshot_deferred_ = false;
}

void Txn::TakeSnapshot() {
  s_->read_valid = false;  // a read from before the snapshot
  if (kept_snapshot_ != nullptr &&
      kept_snapshot_->GetSequenceNumber() == impl_.db()->GetLatestSequenceNumber()) {
    snapshot_ = std::exchange(kept_snapshot_, nullptr);
    return;
  }
  ReleaseKeptSnapshot();
  snapshot_ = impl_.db()->GetSnapshot();
}

void Txn::ReleaseKeptSnapshot() {
  if (kept_snapshot_ == nullptr) return;
  impl_.db()->ReleaseSnapshot(kept_snapshot_);
  kept_snapshot_ = nullptr;
}

void Txn::ResolveSnapshot(const std::string* raw_key) {
  snapshot_deferred_ = false;
  if (raw_key != nullptr && locks_->Holds(*raw_key)) return;
  TakeSnapshot();
}

bool Txn::IsDefaultCf(const rocksdb::ColumnFamilyHandle* cf) const {
  return cf == impl_.db()->DefaultColumnFamily();
}

void Txn::FlushPending() { s_->pending.MoveToBatch(s_->batch); }

Status Txn::GetRaw(rocksdb::ColumnFamilyHandle* cf, std::string_view key, std::string* value,
                   bool* found, std::string_view owner_raw_key) {
  if (snapshot_deferred_) ResolveSnapshot(nullptr);
  if (GetStaged(cf, key, value, found)) return Status::Ok();
  bool from_table = false;
  return GetStored(cf, key, value, found, owner_raw_key, &from_table);
}

Status Txn::GetRawInRun(rocksdb::ColumnFamilyHandle* cf, std::string_view key, const KeyRun& run,
                        std::string* value, bool* found, std::string_view owner_raw_key) {
  if (snapshot_deferred_) ResolveSnapshot(nullptr);
  if (GetStaged(cf, key, value, found)) return Status::Ok();
  if (s_->ahead.Serve(cf->GetID(), key, value, found)) {
    impl_.CountReadAhead(/*filled=*/false);
    return Status::Ok();
  }
  bool from_table = false;
  Status st = GetStored(cf, key, value, found, owner_raw_key, &from_table);
  // A record in a memtable costs less than an iterator's seek: only a table file's is worth
  // reading ahead from, and only from a unit's second such read of a run on (the seek and
  // the steps cost about six point reads in Debian's RocksDB, so a unit that pops once, a
  // pipeline-1 LPOP, must not pay them). Only under the owner's lock do the records stay what
  // was read.
  if (st.ok() && *found && from_table && ++s_->ahead_table_reads >= 2 && locks_ != nullptr &&
      locks_->Holds(owner_raw_key)) {
    FillReadAhead(cf, key, run);
  }
  return st;
}

void Txn::FillReadAhead(rocksdb::ColumnFamilyHandle* cf, std::string_view key, const KeyRun& run) {
  std::string& lower = s_->ahead_lower;
  std::string& upper = s_->ahead_upper;
  lower.assign(run.prefix).append(run.lower_suffix);
  upper.assign(run.prefix).append(run.upper_suffix);
  rocksdb::ReadOptions ro;
  ro.snapshot = snapshot_;
  const rocksdb::Slice lower_slice(lower), upper_slice(upper);
  ro.iterate_lower_bound = &lower_slice;
  ro.iterate_upper_bound = &upper_slice;
  std::unique_ptr<rocksdb::Iterator> it =
      impl_.iterators().Lease(impl_.db(), cf, lower, upper, snapshot_);
  if (it == nullptr) it.reset(impl_.db()->NewIterator(ro, cf));
  const rocksdb::Slice at(key.data(), key.size());
  if (run.descending) {
    it->SeekForPrev(at);
  } else {
    it->Seek(at);
  }
  s_->ahead.Fill(cf->GetID(), run.prefix, run.descending, it.get());
  impl_.CountReadAhead(/*filled=*/true);
}

bool Txn::GetStaged(rocksdb::ColumnFamilyHandle* cf, std::string_view key, std::string* value,
                    bool* found) {
  *found = false;
  if (const std::string* pending = s_->pending.Find(cf, key)) {
    value->assign(*pending);
    *found = true;
    return true;
  }
  std::string_view staged;
  switch (s_->batch.Find(cf->GetID(), key, &staged)) {
    case IndexedBatch::Staged::kPut:
      value->assign(staged);
      *found = true;
      return true;
    case IndexedBatch::Staged::kDeleted:
      return true;
    case IndexedBatch::Staged::kNone:
      break;
  }
  return false;
}

Status Txn::GetStored(rocksdb::ColumnFamilyHandle* cf, std::string_view key, std::string* value,
                      bool* found, std::string_view owner_raw_key, bool* from_table) {
  *found = false;
  *from_table = false;
  rocksdb::PinnableSlice slice(value);
  auto read_stored = [&] { return impl_.ReadPoint(cf, key, &slice, found, snapshot_); };
  RecordCache& cache = impl_.record_cache();
  Status st;
  if (!cache.enabled() || owner_raw_key.empty() || IsDefaultCf(cf)) {
    st = read_stored();
  } else if (const size_t owner_slot = kOwnerSlots + LockPool::StripeOf(owner_raw_key);
             !cache.Interesting(owner_slot)) {
    // The first gate: no element of a collection in the owner's stripe came from a table file
    // yet (a collection written and read in the memtable never looks further).
    st = read_stored();
    if (st.ok() && *found && slice.IsPinned()) cache.Want(owner_slot);
  } else {
    // An element record: cached under its own write version (element_versions.h), in the
    // element slots.
    const uint32_t cf_id = cf->GetID();
    const size_t bucket = ElementVersions::BucketOf(cf_id, key);
    auto cache_key = [&] {
      s_->cache_key.assign(1, kElementCacheTag);
      s_->cache_key.push_back(static_cast<char>(cf_id));
      s_->cache_key.append(key);
      return std::string_view(s_->cache_key);
    };
    st = ReadThroughCache(
        cache, kElementSlots + bucket, cache_key, [&] { return RecordCache::Hash(cache_key()); },
        snapshot_, impl_.db(), [&] { return impl_.element_versions().Version(bucket); },
        read_stored, [](std::string_view) { return true; }, &slice, found,
        /*deep=*/nullptr);  // element records' absences are not cached: only their records
  }
  if (!st.ok() || !*found) return st;
  // Unpinned, the value was copied into *value (the slice's buffer) already.
  if (slice.IsPinned()) {
    *from_table = true;  // RocksDB pins a table file's block; a memtable's value is copied
    value->assign(slice.data(), slice.size());
  }
  return Status::Ok();
}

Result<std::optional<EntryView>> Txn::ReadView(const std::string& raw_key) {
  if (snapshot_deferred_) ResolveSnapshot(&raw_key);
  rocksdb::PinnableSlice* read = &s_->read;
  if (const std::string* pending = s_->pending.Find(impl_.db()->DefaultColumnFamily(), raw_key)) {
    // The unit's own last write (made after any DeleteDb, which puts it in the batch first).
    // What was stored before it was noted by the read before the write, if any.
    read->Reset();
    read->PinSelf(rocksdb::Slice(*pending));
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
        if (Status st = ReadStored(raw_key, read, &found); !st.ok()) return st;
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

Status Txn::ReadStored(const std::string& raw_key, rocksdb::PinnableSlice* read, bool* found) {
  RecordCache& cache = impl_.record_cache();
  bool deep = false;
  auto read_stored = [&] { return impl_.ReadRaw(raw_key, read, found, snapshot_, &deep); };
  // Without a LockSet (the expiry cycle) nothing is gained.
  if (!cache.enabled() || locks_ == nullptr) return read_stored();
  const uint64_t hash = LockPool::HashOf(raw_key);
  const size_t stripe = LockPool::StripeOfHash(hash);  // also the record's slot in the cache
  // A record with an expiry is left out: the expiry cycle removes such records without counting
  // a write version.
  auto keep = [](std::string_view record) {
    const std::optional<int64_t> expiry = DecodeExpiry(record);
    return expiry && *expiry == kNoExpiry;
  };
  return ReadThroughCache(
      cache, stripe, [&] { return std::string_view(raw_key); }, [hash] { return hash; }, snapshot_,
      impl_.db(), [&] { return impl_.locks().WriteVersion(stripe); }, read_stored, keep, read,
      found, &deep);
}

// The value ReadView left in s_->read, as a live entry (nullopt when expired). `locked`: the
// unit holds the key's lock (MayRemoveExpired).
Result<std::optional<EntryView>> Txn::DecodeRead(const std::string& raw_key, bool note,
                                                 bool locked) {
  auto view = DecodeValue(s_->read.ToStringView());
  if (!view) return Status::Corruption("invalid value encoding");
  if (note) NoteRead(raw_key, &*view);
  if (!IsExpired(view->expire_at_ms, now_ms_)) return std::optional<EntryView>(*view);
  if (!impl_.keep_expired() && !s_->expired.Contains(raw_key) &&
      (locked || (!DbFlushed(raw_key) && TakeExpired(raw_key)))) {
    s_->expired.Add(raw_key);
  }
  return std::optional<EntryView>();
}

Result<std::optional<Entry>> Txn::Read(const std::string& raw_key) {
  auto view = ReadView(raw_key);
  if (!view.ok()) return view.status();
  if (!view->has_value()) return std::optional<Entry>();
  const EntryView& v = **view;
  return std::optional<Entry>(
      Entry{v.kind, v.expire_at_ms, std::string(v.payload), v.raw_encoding});
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
              std::string_view payload, bool raw_encoding) {
  // [header][payload] (EncodeValue) assembled in a pending slot; it reaches the batch when
  // something needs the batch whole (FlushPending) or the slot is needed, unless a later Put of
  // the key replaces it. `payload` may point into `read` (a value just read), never into a
  // pending value: ReadView copies a pending value into `read`.
  char header[kMaxValueHeader];
  const size_t n = EncodeValueHeader(kind, expire_at_ms, header, raw_encoding);
  s_->read_valid = false;
  std::string* value = s_->pending.Stage(impl_.db()->DefaultColumnFamily(), raw_key, s_->batch);
  value->assign(header, n);
  value->append(payload);
  NoteWritten(raw_key, expire_at_ms != kNoExpiry ? kPutExpiring : kPutPersistent, expire_at_ms);
}

void Txn::RemoveExpired(std::string_view raw_key) { s_->expired.Add(raw_key); }

void Txn::Delete(const std::string& raw_key) {
  s_->pending.Drop(impl_.db()->DefaultColumnFamily(), raw_key);  // the deletion replaces it
  s_->read_valid = false;
  s_->batch.Delete(impl_.db()->DefaultColumnFamily(), raw_key);
  NoteWritten(raw_key, kDeleted);
}

void Txn::Touch(std::string_view raw_key) { NoteWritten(raw_key, kTouched); }

void Txn::NoteElementWrite(rocksdb::ColumnFamilyHandle* cf, std::string_view key) {
  if (IsDefaultCf(cf)) {
    s_->read_valid = false;
  } else if (impl_.record_cache().enabled()) {
    s_->element_buckets.push_back(
        static_cast<uint32_t>(ElementVersions::BucketOf(cf->GetID(), key)));
  }
}

void Txn::PutRaw(rocksdb::ColumnFamilyHandle* cf, std::string_view key, std::string_view value) {
  NoteElementWrite(cf, key);
  s_->pending.Drop(cf, key);  // this write is the newest
  s_->batch.Put(cf, key, value);
}

void Txn::PutRawRewritable(rocksdb::ColumnFamilyHandle* cf, std::string_view key,
                           std::string_view value) {
  if (value.size() > PendingPuts::kMaxValueBytes) return PutRaw(cf, key, value);
  NoteElementWrite(cf, key);
  s_->pending.Stage(cf, key, s_->batch)->assign(value);
}

void Txn::DeleteRaw(rocksdb::ColumnFamilyHandle* cf, std::string_view key) {
  NoteElementWrite(cf, key);
  s_->pending.Drop(cf, key);  // the deletion replaces it
  s_->batch.Delete(cf, key);
}

void Txn::EraseOnceRaw(rocksdb::ColumnFamilyHandle* cf, std::string_view key) {
  NoteElementWrite(cf, key);
  s_->pending.Drop(cf, key);
  s_->batch.SingleDelete(cf, key);
}

void Txn::DeleteDb(int db) {
  FlushPending();  // before the range deletion, and into the index the walk below reads
  s_->read_valid = false;
  s_->ahead.Clear();  // records of the db's stored keys
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
class BoundedIterator final : public ForwardingIterator {
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
  void set(rocksdb::Iterator* it) {
    it_.reset(it);
    set_inner(it);
  }

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
  // The iterator merges the batch's records in [lower, upper): held ones there join them.
  s_->pending.MoveRangeToBatch(s_->batch, cf, lower, upper);
  // A db emptied in this unit: the stored keys are gone, only the batch's own entries count.
  const bool masked = cf == impl_.db()->DefaultColumnFamily() && DbFlushed(lower);
  auto it = std::make_unique<BoundedIterator>(lower, upper, masked, snapshot_);
  std::unique_ptr<rocksdb::Iterator> base;
  if (!masked) base = impl_.iterators().Lease(impl_.db(), cf, lower, upper, snapshot_);
  if (base == nullptr) base.reset(impl_.db()->NewIterator(it->base_read_options(), cf));
  it->set(s_->batch.NewIteratorWithBase(cf->GetID(), base.release(), lower, upper).release());
  return it;
}

int64_t Txn::expired_found() const { return static_cast<int64_t>(s_->expired.n); }
size_t Txn::written_count() const { return s_->written.n; }
size_t Txn::written_since_mark() const { return marked_ ? s_->mark.written_n : 0; }
std::string_view Txn::written_key(size_t i) const { return s_->written.slots[i]; }
std::string_view Txn::expired_key(size_t i) const { return s_->expired.slots[i]; }
uint32_t Txn::flushed_dbs() const { return s_->flushed; }

}  // namespace sluice::internal
