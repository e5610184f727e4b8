#include "indexed_batch.h"

#include <rocksdb/db.h>
#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include "encoding.h"

namespace sluice::internal {
namespace {

constexpr size_t kInitialSlots = 64;

[[noreturn]] void FormatMismatch() {
  std::fprintf(stderr,
               "sluice: this librocksdb's WriteBatch record layout is not the documented one "
               "that Sluice's batch index reads\n");
  std::abort();
}

std::string_view View(const rocksdb::Slice& s) { return std::string_view(s.data(), s.size()); }

// The staged records of one column family merged over its stored keys (the base iterator):
// a staged Put shows its value (also over a stored key), a staged Delete hides the key.
//
// Positions: moving forward, base and delta both sit at the first entry >= the current key;
// moving backward, at the last entry <= it. On a tie the staged record is the current one.
class DeltaIterator final : public rocksdb::Iterator {
 public:
  DeltaIterator(rocksdb::Iterator* base, std::vector<IndexedBatch::Delta> delta)
      : base_(base), delta_(std::move(delta)) {}

  bool Valid() const override { return valid_; }
  rocksdb::Slice key() const override {
    return from_delta_ ? rocksdb::Slice(delta_[di_].key.data(), delta_[di_].key.size())
                       : base_->key();
  }
  rocksdb::Slice value() const override {
    return from_delta_ ? rocksdb::Slice(delta_[di_].value.data(), delta_[di_].value.size())
                       : base_->value();
  }
  rocksdb::Status status() const override { return base_->status(); }

  void SeekToFirst() override {
    base_->SeekToFirst();
    di_ = 0;
    FindForward();
  }
  void SeekToLast() override {
    base_->SeekToLast();
    di_ = static_cast<ptrdiff_t>(delta_.size()) - 1;
    FindBackward();
  }
  void Seek(const rocksdb::Slice& target) override {
    base_->Seek(target);
    di_ = LowerBound(View(target));
    FindForward();
  }
  void SeekForPrev(const rocksdb::Slice& target) override {
    base_->SeekForPrev(target);
    di_ = UpperBound(View(target)) - 1;
    FindBackward();
  }

  void Next() override {
    if (!forward_) {
      // From "last <= current" to "first > current": nothing lies between either side's entry
      // and the current key, so one step each (the base's first entry when it was before the
      // start).
      StepBase(/*forward=*/true);
      ++di_;
      return FindForward();
    }
    if (from_delta_) {
      if (BaseAt(delta_[di_].key)) base_->Next();
      ++di_;
    } else {
      base_->Next();
    }
    FindForward();
  }

  void Prev() override {
    if (forward_) {
      StepBase(/*forward=*/false);
      --di_;
      return FindBackward();
    }
    if (from_delta_) {
      if (BaseAt(delta_[di_].key)) base_->Prev();
      --di_;
    } else {
      base_->Prev();
    }
    FindBackward();
  }

 private:
  bool DeltaValid() const { return di_ >= 0 && di_ < static_cast<ptrdiff_t>(delta_.size()); }
  bool BaseAt(std::string_view k) const { return base_->Valid() && View(base_->key()) == k; }
  void StepBase(bool forward) {
    if (!base_->Valid()) return forward ? base_->SeekToFirst() : base_->SeekToLast();
    forward ? base_->Next() : base_->Prev();
  }
  ptrdiff_t LowerBound(std::string_view k) const {
    return std::lower_bound(
               delta_.begin(), delta_.end(), k,
               [](const IndexedBatch::Delta& d, std::string_view t) { return d.key < t; }) -
           delta_.begin();
  }
  ptrdiff_t UpperBound(std::string_view k) const {
    return std::upper_bound(
               delta_.begin(), delta_.end(), k,
               [](std::string_view t, const IndexedBatch::Delta& d) { return t < d.key; }) -
           delta_.begin();
  }

  void FindForward() { Settle(/*forward=*/true); }
  void FindBackward() { Settle(/*forward=*/false); }

  // Makes the current entry the nearer of the two sides in the direction of travel (the staged
  // record on a tie), stepping over staged Deletes and the stored keys they hide.
  void Settle(bool forward) {
    forward_ = forward;
    for (;;) {
      const bool base_valid = base_->Valid();
      if (!DeltaValid()) {
        from_delta_ = false;
        valid_ = base_valid;
        return;
      }
      const IndexedBatch::Delta& d = delta_[di_];
      if (base_valid && (forward ? View(base_->key()) < d.key : View(base_->key()) > d.key)) {
        from_delta_ = false;
        valid_ = true;
        return;
      }
      if (!d.deleted) {
        from_delta_ = true;
        valid_ = true;
        return;
      }
      if (BaseAt(d.key)) forward ? base_->Next() : base_->Prev();  // hidden by the Delete
      di_ += forward ? 1 : -1;
    }
  }

  std::unique_ptr<rocksdb::Iterator> base_;
  const std::vector<IndexedBatch::Delta> delta_;
  ptrdiff_t di_ = 0;
  bool forward_ = true;
  bool from_delta_ = false;
  bool valid_ = false;
};

}  // namespace

IndexedBatch::IndexedBatch() : slots_(kInitialSlots) {}

void IndexedBatch::Put(rocksdb::ColumnFamilyHandle* cf, std::string_view key,
                       std::string_view value) {
  batch_.Put(cf, rocksdb::Slice(key.data(), key.size()), rocksdb::Slice(value.data(), value.size()))
      .PermitUncheckedError();
  IndexLast(cf->GetID(), key, /*deleted=*/false, value.size());
}

void IndexedBatch::Delete(rocksdb::ColumnFamilyHandle* cf, std::string_view key) {
  batch_.Delete(cf, rocksdb::Slice(key.data(), key.size())).PermitUncheckedError();
  IndexLast(cf->GetID(), key, /*deleted=*/true, 0);
}

void IndexedBatch::SingleDelete(rocksdb::ColumnFamilyHandle* cf, std::string_view key) {
  batch_.SingleDelete(cf, rocksdb::Slice(key.data(), key.size())).PermitUncheckedError();
  IndexLast(cf->GetID(), key, /*deleted=*/true, 0);
}

// The record format (write_batch.cc, also the WAL's): ... varint32 key length, key, and for a
// Put varint32 value length, value; the record just appended ends the batch.
void IndexedBatch::IndexLast(uint32_t cf, std::string_view key, bool deleted, size_t value_len) {
  if (cf != 0) ++non_key_records_;
  const std::string& rep = batch_.Data();
  const size_t value_off = rep.size() - value_len;
  const size_t key_off =
      deleted ? rep.size() - key.size() : value_off - VarintLength(value_len) - key.size();
  if (key_off > rep.size() || std::memcmp(rep.data() + key_off, key.data(), key.size()) != 0) {
    FormatMismatch();
  }
  Index(cf, key_off, key.size(), deleted, value_off, value_len);
}

void IndexedBatch::Index(uint32_t cf, size_t key_off, size_t key_len, bool deleted,
                         size_t value_off, size_t value_len) {
  if ((used_ + 1) * 2 > slots_.size()) Grow();
  const std::string_view key(batch_.Data().data() + key_off, key_len);
  const uint64_t hash = XXH3_64bits_withSeed(key.data(), key.size(), cf);
  const size_t at = Probe(cf, key, hash);
  Slot& s = slots_[at];
  if (s.gen != gen_) {
    ++used_;
    unordered_.push_back(static_cast<uint32_t>(at));
  }
  s.hash = hash;
  s.gen = gen_;
  s.cf = cf;
  s.deleted = deleted ? 1 : 0;
  s.key_off = key_off;
  s.key_len = key_len;
  s.value_off = value_off;
  s.value_len = value_len;
}

size_t IndexedBatch::Probe(uint32_t cf, std::string_view key, uint64_t hash) const {
  const size_t mask = slots_.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.gen != gen_) return i;
    if (s.hash == hash && s.cf == cf && KeyOf(s) == key) return i;
  }
}

void IndexedBatch::Grow() {
  std::vector<Slot> old(std::max(kInitialSlots, slots_.size() * 2));
  old.swap(slots_);
  used_ = 0;
  ordered_.clear();  // the slots move: every one is ordered again at the next Sorted
  unordered_.clear();
  const size_t mask = slots_.size() - 1;
  for (const Slot& s : old) {
    if (s.gen != gen_) continue;
    size_t i = s.hash & mask;
    while (slots_[i].gen == gen_) i = (i + 1) & mask;
    slots_[i] = s;
    unordered_.push_back(static_cast<uint32_t>(i));
    ++used_;
  }
}

IndexedBatch::Staged IndexedBatch::Find(uint32_t cf_id, std::string_view key,
                                        std::string_view* value) const {
  if (used_ == 0) return Staged::kNone;
  const Slot& s = slots_[Probe(cf_id, key, XXH3_64bits_withSeed(key.data(), key.size(), cf_id))];
  if (s.gen != gen_) return Staged::kNone;
  if (s.deleted) return Staged::kDeleted;
  *value = std::string_view(batch_.Data().data() + s.value_off, s.value_len);
  return Staged::kPut;
}

void IndexedBatch::Sorted(uint32_t cf_id, std::string_view lower, std::string_view upper,
                          std::vector<Delta>* out) const {
  out->clear();
  if (used_ == 0) return;
  auto before = [this](uint32_t a, uint32_t b) {
    const Slot& x = slots_[a];
    const Slot& y = slots_[b];
    return x.cf != y.cf ? x.cf < y.cf : KeyOf(x) < KeyOf(y);
  };
  if (!unordered_.empty()) {  // merge the keys indexed since the last call into the order
    std::sort(unordered_.begin(), unordered_.end(), before);
    if (unordered_.size() * 16 < ordered_.size()) {
      // Few new keys into a long order (each member of a commit group of scripts that walk a
      // key: a merge compares its way along the whole order, O(n) key comparisons per
      // iterator, quadratic in the group): each finds its place by binary search, and the
      // runs between are copied, not compared.
      merged_.resize(ordered_.size() + unordered_.size());
      auto out = merged_.begin();
      auto from = ordered_.begin();
      for (uint32_t slot : unordered_) {
        const auto at = std::upper_bound(from, ordered_.end(), slot, before);
        out = std::copy(from, at, out);
        *out++ = slot;
        from = at;
      }
      std::copy(from, ordered_.end(), out);
      ordered_.swap(merged_);
    } else {
      const auto mid = static_cast<std::ptrdiff_t>(ordered_.size());
      ordered_.insert(ordered_.end(), unordered_.begin(), unordered_.end());
      std::inplace_merge(ordered_.begin(), ordered_.begin() + mid, ordered_.end(), before);
    }
    unordered_.clear();
  }
  auto it = std::lower_bound(ordered_.begin(), ordered_.end(), lower,
                             [this, cf_id](uint32_t at, std::string_view k) {
                               const Slot& x = slots_[at];
                               return x.cf != cf_id ? x.cf < cf_id : KeyOf(x) < k;
                             });
  const char* rep = batch_.Data().data();
  for (; it != ordered_.end(); ++it) {
    const Slot& s = slots_[*it];
    const std::string_view key = KeyOf(s);
    if (s.cf != cf_id || (!upper.empty() && key >= upper)) break;
    out->push_back(Delta{key, std::string_view(rep + s.value_off, s.value_len), s.deleted != 0});
  }
}

std::unique_ptr<rocksdb::Iterator> IndexedBatch::NewIteratorWithBase(uint32_t cf_id,
                                                                     rocksdb::Iterator* base,
                                                                     std::string_view lower,
                                                                     std::string_view upper) const {
  std::vector<Delta> delta;
  Sorted(cf_id, lower, upper, &delta);
  if (delta.empty()) return std::unique_ptr<rocksdb::Iterator>(base);
  return std::make_unique<DeltaIterator>(base, std::move(delta));
}

void IndexedBatch::Clear() {
  batch_.Clear();
  non_key_records_ = 0;
  ClearIndex();
}

// Every slot of an older generation is empty: no need to touch them.
void IndexedBatch::ClearIndex() {
  used_ = 0;
  ordered_.clear();
  unordered_.clear();
  if (++gen_ == std::numeric_limits<uint32_t>::max()) {
    for (Slot& s : slots_) s.gen = 0;
    gen_ = 1;
  }
}

void IndexedBatch::Trim(size_t keep_bytes) {
  if (batch_.GetDataSize() > keep_bytes) batch_ = rocksdb::WriteBatch();
  if (slots_.size() * sizeof(Slot) > keep_bytes) {
    std::vector<Slot>(kInitialSlots).swap(slots_);
    used_ = 0;
    std::vector<uint32_t>().swap(ordered_);
    std::vector<uint32_t>().swap(unordered_);
    std::vector<uint32_t>().swap(merged_);
  }
}

rocksdb::Status IndexedBatch::RollbackToSavePoint() {
  rocksdb::Status s = batch_.RollbackToSavePoint();
  if (s.ok()) Rebuild();
  return s;
}

// Indexes every Put and (Single)Delete left in the batch again, in order (a later record of a key
// replaces an earlier one, as when they were added).
void IndexedBatch::Rebuild() {
  ClearIndex();
  class Reindex final : public rocksdb::WriteBatch::Handler {
   public:
    explicit Reindex(IndexedBatch& b) : b_(b) {}
    rocksdb::Status PutCF(uint32_t cf, const rocksdb::Slice& key,
                          const rocksdb::Slice& value) override {
      b_.Index(cf, Offset(key), key.size(), false, Offset(value), value.size());
      return rocksdb::Status::OK();
    }
    rocksdb::Status DeleteCF(uint32_t cf, const rocksdb::Slice& key) override {
      b_.Index(cf, Offset(key), key.size(), true, 0, 0);
      return rocksdb::Status::OK();
    }
    rocksdb::Status SingleDeleteCF(uint32_t cf, const rocksdb::Slice& key) override {
      return DeleteCF(cf, key);
    }
    rocksdb::Status MergeCF(uint32_t, const rocksdb::Slice&, const rocksdb::Slice&) override {
      return rocksdb::Status::OK();
    }
    rocksdb::Status DeleteRangeCF(uint32_t, const rocksdb::Slice&, const rocksdb::Slice&) override {
      return rocksdb::Status::OK();
    }

   private:
    size_t Offset(const rocksdb::Slice& s) const {
      return static_cast<size_t>(s.data() - b_.batch_.Data().data());
    }
    IndexedBatch& b_;
  };
  Reindex handler(*this);
  batch_.Iterate(&handler).PermitUncheckedError();
}

}  // namespace sluice::internal
