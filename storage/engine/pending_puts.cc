// A unit's rewritable Puts held back from its batch: pending_puts.h.
#include "pending_puts.h"

#include "scratch.h"

namespace sluice::internal {

PendingPuts::Slot* PendingPuts::FindSlot(const rocksdb::ColumnFamilyHandle* cf,
                                         std::string_view key) {
  if (used_ == 0) return nullptr;
  for (Slot& s : slots_) {
    if (s.used && s.cf == cf && s.key == key) return &s;
  }
  return nullptr;
}

const std::string* PendingPuts::Find(const rocksdb::ColumnFamilyHandle* cf,
                                     std::string_view key) const {
  if (used_ == 0) return nullptr;
  for (const Slot& s : slots_) {
    if (s.used && s.cf == cf && s.key == key) return &s.value;
  }
  return nullptr;
}

void PendingPuts::Move(Slot& s, IndexedBatch& batch) {
  batch.Put(s.cf, s.key, s.value);
  s.used = false;
  s.gen = ++gen_;
  --used_;
}

std::string* PendingPuts::Stage(rocksdb::ColumnFamilyHandle* cf, std::string_view key,
                                IndexedBatch& batch) {
  Slot* slot = FindSlot(cf, key);
  if (slot == nullptr) {
    Slot* oldest = nullptr;
    for (Slot& s : slots_) {
      if (!s.used) {
        slot = &s;
        break;
      }
      if (oldest == nullptr || s.gen < oldest->gen) oldest = &s;
    }
    if (slot == nullptr) {
      Move(*oldest, batch);
      slot = oldest;
    }
    slot->cf = cf;
    slot->key.assign(key);
    slot->used = true;
    ++used_;
  }
  slot->gen = ++gen_;
  return &slot->value;
}

void PendingPuts::Drop(const rocksdb::ColumnFamilyHandle* cf, std::string_view key) {
  if (Slot* s = FindSlot(cf, key)) {
    s->used = false;
    s->gen = ++gen_;
    --used_;
  }
}

void PendingPuts::MoveToBatch(IndexedBatch& batch) {
  if (used_ == 0) return;
  for (Slot& s : slots_) {
    if (s.used) Move(s, batch);
  }
}

void PendingPuts::MoveRangeToBatch(IndexedBatch& batch, const rocksdb::ColumnFamilyHandle* cf,
                                   std::string_view lower, std::string_view upper) {
  if (used_ == 0) return;
  for (Slot& s : slots_) {
    if (s.used && s.cf == cf && std::string_view(s.key) >= lower &&
        std::string_view(s.key) < upper) {
      Move(s, batch);
    }
  }
}

void PendingPuts::MoveLargeToBatch(IndexedBatch& batch) {
  if (used_ == 0) return;
  for (Slot& s : slots_) {
    if (s.used && s.value.size() > kMaxValueBytes) Move(s, batch);
  }
}

size_t PendingPuts::Bytes() const {
  size_t n = 0;
  if (used_ == 0) return n;
  for (const Slot& s : slots_) {
    if (s.used) n += s.key.size() + s.value.size();
  }
  return n;
}

// Copies a slot unless the copy is already the same (same writes counter, same use): marks copy
// only the slots changed since the last copy.
void PendingPuts::CopySlot(const Slot& from, Slot* to) {
  if (to->gen == from.gen && to->used == from.used) return;
  to->used = from.used;
  to->gen = from.gen;
  if (from.used) {
    to->cf = from.cf;
    to->key.assign(from.key);
    to->value.assign(from.value);
  }
}

void PendingPuts::Save(Saved* to) const {
  if (to->gen == gen_) return;
  for (size_t i = 0; i < kSlots; ++i) {
    CopySlot(slots_[i], &to->slots[i]);
  }
  to->gen = gen_;
}

void PendingPuts::Restore(const Saved& from) {
  used_ = 0;
  for (size_t i = 0; i < kSlots; ++i) {
    if (from.slots[i].used) ++used_;
    CopySlot(from.slots[i], &slots_[i]);
  }
  gen_ = from.gen;
}

void PendingPuts::Clear() {
  if (used_ == 0) return;
  for (Slot& s : slots_) {
    if (s.used) {
      s.used = false;
      s.gen = ++gen_;
    }
  }
  used_ = 0;
}

void PendingPuts::Trim() {
  for (Slot& s : slots_) {
    TrimScratch(&s.key);
    TrimScratch(&s.value);
  }
}

}  // namespace sluice::internal
