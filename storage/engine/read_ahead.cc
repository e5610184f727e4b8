// A unit's read-ahead of a run of keys: read_ahead.h.
#include "read_ahead.h"

#include "scratch.h"

namespace sluice::internal {

void ReadAhead::Fill(uint32_t cf_id, std::string_view prefix, bool descending,
                     rocksdb::Iterator* it) {
  n_ = 0;
  next_ = 0;
  cf_id_ = cf_id;
  descending_ = descending;
  prefix_.assign(prefix);
  size_t bytes = 0;
  for (; it->Valid() && n_ < kMaxEntries && bytes < kMaxBytes;
       descending ? it->Prev() : it->Next()) {
    const std::string_view key = it->key().ToStringView();
    if (!key.starts_with(prefix)) break;
    if (n_ == entries_.size()) entries_.emplace_back();
    Entry& e = entries_[n_++];
    e.key.assign(key);
    e.value.assign(it->value().ToStringView());
    bytes += e.value.size();
  }
  if (!it->status().ok()) n_ = 0;
}

bool ReadAhead::Serve(uint32_t cf_id, std::string_view key, std::string* value, bool* found) {
  if (n_ == 0 || cf_id != cf_id_ || !key.starts_with(prefix_)) return false;
  if (Before(key, entries_[0].key) || Before(entries_[n_ - 1].key, key)) return false;
  size_t i = next_ < n_ && !Before(key, entries_[next_].key) ? next_ : 0;
  while (i < n_ && Before(entries_[i].key, key)) ++i;
  next_ = i;
  *found = i < n_ && entries_[i].key == key;
  if (*found) {
    value->assign(entries_[i].value);
    next_ = i + 1;
  }
  return true;
}

void ReadAhead::Trim() {
  for (Entry& e : entries_) {
    TrimScratch(&e.key);
    TrimScratch(&e.value);
  }
  TrimScratch(&prefix_);
}

}  // namespace sluice::internal
