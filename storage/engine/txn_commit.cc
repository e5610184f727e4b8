// Txn (txn.h): what a commit changes in the keyspace counts, the commit itself (one RocksDB
// write, then the write marks, the expiries handed to the expiry cycle and the commit
// observers), rollback, and the marks of a commit group's members.
#include <algorithm>
#include <limits>

#include "store_impl.h"
#include "txn.h"
#include "txn_scratch.h"

namespace sluice::internal {

using namespace txn_detail;  // NOLINT: the Txn's own helpers (txn_scratch.h)

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

// The read noted before the first write (at position `first`) of `key`, which saw what that
// write replaces, or null: reads later than the key's first read come after a write. Needs
// read_order sorted (ComputeCountChanges).
const ReadNote* NoteBeforeWrite(const KeyList& reads, const std::vector<uint32_t>& read_order,
                                const std::vector<ReadNote>& notes, std::string_view key,
                                uint64_t hash, size_t first) {
  const int64_t i = FirstPosition(reads, read_order, key, hash);
  return i >= 0 && notes[i].written_n <= first ? &notes[i] : nullptr;
}

}  // namespace

// Needs s_->read_order (ComputeCountChanges).
Status Txn::StoredCounts(const std::string& raw_key, uint64_t hash, size_t first, KeyCounts* out,
                         int64_t* expire_at_ms) {
  if (const ReadNote* note =
          NoteBeforeWrite(s_->reads, s_->read_order, s_->read_notes, raw_key, hash, first)) {
    *out = note->counts;
    *expire_at_ms = note->expire_at_ms;
    return Status::Ok();
  }
  if (keys_new_) {  // set_keys_new: nothing stored to replace
    *out = KeyCounts{};
    *expire_at_ms = kNoExpiry;
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
  // The distinct key at order[g]: where its positions end, and its first and last writes (a
  // Touch writes nothing; -1 when it was only touched).
  struct KeyWrites {
    size_t end;
    int64_t first = -1, last = -1;
  };
  const auto writes_at = [&](size_t g) {
    KeyWrites w{g + 1};
    while (w.end < order.size() && written.Same(order[w.end], order[g])) ++w.end;
    for (size_t j = g; j < w.end; ++j) {
      if (s_->ops[order[j]] == kTouched) continue;
      if (w.first < 0) w.first = order[j];
      w.last = order[j];
    }
    return w;
  };
  // Each blind write reads what it replaces (StoredCounts), a few dependent cache misses in the
  // memtable; in a group of many (a round of pipeline-1 SETs from many connections) their keys
  // are fetched together first, sixteen at a time, so that the misses overlap.
  if (!keys_new_ && order.size() > 1) {
    std::string_view blind[NewestMemTable::kMaxKeys];
    size_t n = 0;
    for (size_t g = 0; g < order.size();) {
      const KeyWrites w = writes_at(g);
      const std::string& key = written.slots[order[g]];
      const uint64_t hash = written.hashes[order[g]];
      g = w.end;
      if (w.first < 0 || NoteBeforeWrite(s_->reads, s_->read_order, s_->read_notes, key, hash,
                                         static_cast<size_t>(w.first)) != nullptr) {
        continue;
      }
      blind[n++] = key;
      if (n == NewestMemTable::kMaxKeys) {
        impl_.keys_memtable().Prefetch(blind, n);
        n = 0;
      }
    }
    if (n > 1) impl_.keys_memtable().Prefetch(blind, n);
  }
  for (size_t g = 0; g < order.size();) {
    const KeyWrites w = writes_at(g);
    const std::string& key = written.slots[order[g]];
    const uint64_t hash = written.hashes[order[g]];
    const int64_t first = w.first, last = w.last;
    g = w.end;
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
  ReleaseKeptSnapshot();
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
  // Element writes nobody read first (LPUSH's new positions...): their memtable buckets warmed
  // before the insert (write_prefetch.h); a batch of plain keys is not walked.
  if (s_->batch.NonKeyRecords() >= 2) impl_.PrefetchElementWrites(*wb);
  // The write versions of the stripes held are odd while the write is in flight (lock_pool.h),
  // so no reader takes a record from the record cache, or fills it, across the change. A unit
  // that writes nothing (a read-only command's) leaves them, and the records cached, alone.
  // The same for the element records' buckets (element_versions.h), each bumped once.
  const bool versioned = locks_ != nullptr && wb->Count() > 0;
  std::vector<uint32_t>& buckets = s_->element_buckets;
  if (buckets.size() > 1) {
    std::sort(buckets.begin(), buckets.end());
    buckets.erase(std::unique(buckets.begin(), buckets.end()), buckets.end());
  }
  ElementVersions& element_versions = impl_.element_versions();
  if (versioned) locks_->BeginWrite();
  for (uint32_t b : buckets) element_versions.Bump(b);
  Status s = impl_.Write(wb, durable && !only_removals, defer_durability, &applied);
  for (uint32_t b : buckets) element_versions.Bump(b);
  if (versioned) locks_->EndWrite();
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
    if (s_->expired.n > 0) {
      impl_.AddExpired(static_cast<int64_t>(s_->expired.n));
      impl_.NotifyExpired(*this);
    }
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

// The last read stays valid for the next member (read_valid): it was made under the key's
// lock, which the group holds until it flushes (Commit then resets it), and every write or
// rollback since invalidated it. So the members of a group reading one hot key (a pipelined
// SADD or HGET on one key) read its metadata once, not once per member.
void Txn::Retime(UnitTime now) {
  if (now.ns <= now_ns_) return;
  now_ns_ = now.ns;
  now_ms_ = now.ns / 1'000'000;
}

void Txn::SetMark() {
  conflicted_ = false;
  // Nothing staged, noted or emptied since the mark: it already marks this state. The common
  // case: a group member joins right after the previous member's commit moved the mark, and
  // leaves having committed; moving the savepoint costs two RocksDB calls per member.
  if (marked_ && !StagedSinceMark() && s_->reads.n == s_->mark.reads_n) return;
  // A member's writes are in the batch before the group's savepoint moves on, but for small
  // pending Puts (Scratch::pending): they stay pending, the mark keeping copies for a rollback.
  s_->pending.MoveLargeToBatch(s_->batch);
  DropMark();
  s_->batch.SetSavePoint();
  marked_ = true;
  Scratch::Mark& m = s_->mark;
  s_->pending.Save(&m.pending);
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
  // Nothing staged or noted since the mark (a member that committed, then ended): nothing to
  // drop, and the last read stays valid for the next member (Retime).
  if (!StagedSinceMark() && s_->reads.n == s_->mark.reads_n) {
    conflicted_ = false;
    return;
  }
  s_->read_valid = false;
  // The pending Puts as they were at the mark (one moved into the batch since is rolled back
  // with the batch below).
  s_->pending.Restore(s_->mark.pending);
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
  return s_->batch.Count() != s_->mark.batch_count || s_->pending.gen() != s_->mark.pending.gen ||
         s_->written.n != s_->mark.written_n || s_->expired.n != s_->mark.expired_n ||
         s_->flushed != s_->mark.flushed;
}

size_t Txn::staged_bytes() const { return s_->batch.DataSize() + s_->pending.Bytes(); }

}  // namespace sluice::internal
