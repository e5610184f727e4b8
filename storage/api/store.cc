// Store, the library embedders link: opening a store and the thin forwarding of its engine
// calls to Store::Impl (storage/engine). Its data operations are autocommit.cc.
#include <algorithm>
#include <memory>

#include "store_impl.h"

namespace sluice {

// ---- Store: thin forwarding

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Store::~Store() = default;

Result<std::unique_ptr<Store>> Store::Open(Options options) {
  auto impl = std::make_unique<Impl>(std::move(options));
  Status s = impl->Open();
  if (!s.ok()) return s;
  return std::unique_ptr<Store>(new Store(std::move(impl)));
}

const Clock& Store::clock() const { return impl_->clock(); }
Durability Store::durability() const { return impl_->durability(); }
void Store::set_durability(Durability d) { impl_->set_durability(d); }
void Store::set_max_value_bytes(int64_t bytes) { impl_->set_max_value_bytes(bytes); }
void Store::set_hll_sparse_max_bytes(int64_t bytes) { impl_->set_hll_sparse_max_bytes(bytes); }
void Store::set_block_cache_bytes(size_t bytes) { impl_->set_block_cache_bytes(bytes); }
int Store::active_expire_effort() const { return impl_->expire_effort(); }
void Store::set_active_expire_effort(int effort) { impl_->set_expire_effort(effort); }
void Store::set_keep_expired(bool on) { impl_->set_keep_expired(on); }
void Store::set_keep_expired_paused(bool on) { impl_->set_keep_expired_paused(on); }
Status Store::SyncWal() { return impl_->SyncWal(); }
Status Store::Checkpoint(const std::string& dir) { return impl_->Checkpoint(dir); }
Store::Stats Store::GetStats() const { return impl_->GetStats(); }

uint64_t Store::DurabilityTicket() const { return impl_->DurabilityTicket(); }
void Store::PrefetchKeys(int db, std::span<const std::string_view> keys) const {
  constexpr size_t kMax = internal::NewestMemTable::kMaxKeys;
  static_assert(kMax == kPrefetchKeys);
  thread_local std::string raw[kMax];  // reused: no allocation once warm
  std::string_view views[kMax];
  const size_t n = std::min(keys.size(), kMax);
  internal::EncodeKeysAhead(db, keys.first(n), raw);
  for (size_t i = 0; i < n; ++i) views[i] = raw[i];
  impl_->keys_memtable().Prefetch(views, n);
}
Status Store::FlushLog() { return impl_->FlushLog(); }
Status Store::FlushLog(uint64_t ticket) { return impl_->FlushLog(ticket); }
void Store::WhenDurable(uint64_t ticket, std::function<void(Status)> done) {
  impl_->WhenDurable(ticket, std::move(done));
}
Status Store::AwaitDurable(uint64_t ticket) { return impl_->AwaitDurable(ticket); }

Status Store::AddCommitObserver(CommitObserver* observer) {
  return impl_->AddCommitObserver(observer);
}

Result<DataDirMode> Store::GetDataDirMode() { return impl_->ReadDataDirMode(); }
Status Store::SetDataDirMode(DataDirMode mode) { return impl_->WriteDataDirMode(mode); }

}  // namespace sluice
