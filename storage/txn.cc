#include "txn.h"

#include <algorithm>

namespace sluice::internal {

Result<std::optional<Entry>> Txn::Read(const std::string& raw_key) {
  auto entry = impl_.ReadEntry(raw_key);
  if (!entry.ok() || !entry->has_value()) return entry;
  if (!IsExpired((*entry)->expire_at_ms, now_ms_)) return entry;
  if (std::find(expired_.begin(), expired_.end(), raw_key) == expired_.end()) {
    expired_.push_back(raw_key);
  }
  return std::optional<Entry>();
}

void Txn::Put(const std::string& raw_key, ValueKind kind, int64_t expire_at_ms,
              std::string_view payload) {
  batch_.Put(raw_key, EncodeValue(kind, expire_at_ms, payload));
  written_.push_back(raw_key);
}

void Txn::Delete(const std::string& raw_key) {
  batch_.Delete(raw_key);
  written_.push_back(raw_key);
}

bool Txn::Wrote(const std::string& raw_key) const {
  return std::find(written_.begin(), written_.end(), raw_key) != written_.end();
}

Status Txn::Commit(bool durable) {
  for (const auto& k : expired_) {
    if (!Wrote(k)) batch_.Delete(k);
  }
  Status s = impl_.Write(&batch_, durable);
  if (s.ok() && !expired_.empty()) impl_.AddExpired(static_cast<int64_t>(expired_.size()));
  return s;
}

}  // namespace sluice::internal
