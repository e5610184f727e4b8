#include "txn.h"

#include <algorithm>

namespace sluice::internal {

namespace {
// Key lists longer than this (a many-key command) are given back after the Txn.
constexpr size_t kKeepKeySlots = 64;
}  // namespace

void Txn::KeyList::Add(std::string_view k) {
  if (n == slots.size()) slots.emplace_back();
  slots[n++].assign(k);
}

bool Txn::KeyList::Contains(std::string_view k) const {
  return std::find(slots.begin(), slots.begin() + static_cast<std::ptrdiff_t>(n), k) !=
         slots.begin() + static_cast<std::ptrdiff_t>(n);
}

Txn::Txn(Store::Impl& impl, int64_t now_ms) : impl_(impl), now_ms_(now_ms), s_(scratch_.get()) {
  s_->batch.Clear();
  s_->read.Reset();
  s_->expired.n = 0;
  s_->written.n = 0;
}

Txn::~Txn() {
  // Releases whatever the last read pinned (a block cache entry) and gives back buffers a huge
  // value or key made large, so the thread's scratch keeps only modest capacity.
  s_->read.Reset();
  TrimScratch(s_->read.GetSelf());
  if (s_->batch.GetDataSize() > kScratchKeepBytes) s_->batch = rocksdb::WriteBatch();
  for (KeyList* list : {&s_->expired, &s_->written}) {
    if (list->slots.size() > kKeepKeySlots) {  // a many-key command (MSET): not kept
      std::vector<std::string>().swap(list->slots);
      continue;
    }
    for (size_t i = 0; i < list->n; ++i) TrimScratch(&list->slots[i]);
  }
}

Result<std::optional<EntryView>> Txn::ReadView(const std::string& raw_key) {
  bool found = false;
  Status st = impl_.ReadRaw(raw_key, &s_->read, &found);
  if (!st.ok()) return st;
  if (!found) return std::optional<EntryView>();
  auto view = DecodeValue(s_->read.ToStringView());
  if (!view) return Status::Corruption("invalid value encoding");
  if (!IsExpired(view->expire_at_ms, now_ms_)) return std::optional<EntryView>(*view);
  if (!s_->expired.Contains(raw_key)) s_->expired.Add(raw_key);
  return std::optional<EntryView>();
}

Result<std::optional<Entry>> Txn::Read(const std::string& raw_key) {
  auto view = ReadView(raw_key);
  if (!view.ok()) return view.status();
  if (!view->has_value()) return std::optional<Entry>();
  const EntryView& v = **view;
  return std::optional<Entry>(Entry{v.kind, v.expire_at_ms, std::string(v.payload)});
}

void Txn::Put(const std::string& raw_key, ValueKind kind, int64_t expire_at_ms,
              std::string_view payload) {
  // The value is [header][payload] (EncodeValue), handed to the batch in two parts so that it
  // is copied once, into the batch.
  char header[kMaxValueHeader];
  const size_t n = EncodeValueHeader(kind, expire_at_ms, header);
  const rocksdb::Slice key(raw_key);
  const rocksdb::Slice parts[2] = {rocksdb::Slice(header, n),
                                   rocksdb::Slice(payload.data(), payload.size())};
  s_->batch.Put(rocksdb::SliceParts(&key, 1), rocksdb::SliceParts(parts, 2));
  s_->written.Add(raw_key);
}

void Txn::Delete(const std::string& raw_key) {
  s_->batch.Delete(raw_key);
  s_->written.Add(raw_key);
}

Status Txn::Commit(bool durable) {
  for (size_t i = 0; i < s_->expired.n; ++i) {
    const std::string& k = s_->expired.slots[i];
    if (!s_->written.Contains(k)) s_->batch.Delete(k);
  }
  Status s = impl_.Write(&s_->batch, durable);
  if (s.ok() && s_->expired.n > 0) impl_.AddExpired(static_cast<int64_t>(s_->expired.n));
  return s;
}

}  // namespace sluice::internal
