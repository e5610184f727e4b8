// Store::Transaction (a unit of work: its locks, one time, one batch) and the commit observers.
#include <new>
#include <vector>

#include "store_impl.h"
#include "txn.h"

namespace sluice {

using internal::LockSet;
using internal::RawKey;
using internal::Txn;

namespace {
using LockSets = internal::FreeList<LockSet>;
static_assert(sizeof(Txn) <= 64 && alignof(Txn) <= 16, "grow Transaction::txn_storage_");

// The CommitGroups alive on this thread. A unit that is not a member of one of them and waits
// for its locks first flushes them: a group may hold the very stripe it needs, and the group
// could only release it on this same thread.
thread_local std::vector<CommitGroup*> open_groups;

void FlushOpenGroups(const CommitGroup* except) {
  for (CommitGroup* g : open_groups) {
    if (g != except) static_cast<void>(g->Flush());
  }
}
}  // namespace

Store::Transaction::Transaction(Store& store, std::span<const KeyRef> keys,
                                TransactionOptions options)
    : store_(store), options_(options) {
  if (options.group != nullptr) {
    if (!options.all_keys) {
      JoinGroup(keys);
      return;
    }
    // A unit that locks everything runs alone, after the group's writes.
    static_cast<void>(options.group->Flush());
  }
  if (options.all_keys || !keys.empty()) FlushOpenGroups(options.group);  // it will wait for locks
  locks_ = LockSets::Acquire();
  if (options.all_keys) {
    locks_->PlanAll();
  } else {
    for (const KeyRef& k : keys) locks_->Plan(RawKey(k.db, k.key));
  }
  locks_->Lock(store.impl().locks());
  // The time is read once the locks are held, so a unit never runs at a time earlier than the
  // unit it waited for.
  txn_ = new (txn_storage_) Txn(store.impl(), internal::UnitTime{store.impl().clock().NowNs()});
  txn_->set_locks(locks_, options.isolate_reads);
}

// Takes the stripes the group lacks by try-lock; if one is busy, flushes the group (releasing
// all it holds) and then waits for this unit's stripes like an own unit. An isolating member
// (a script) claims the undeclared keys it reads the same way, into the group's locks.
void Store::Transaction::JoinGroup(std::span<const KeyRef> keys) {
  group_ = options_.group;
  locks_ = &group_->locks();
  bool held = true;
  for (const KeyRef& k : keys) {
    if (!locks_->TryAcquire(RawKey(k.db, k.key))) {
      held = false;
      break;
    }
  }
  if (!held) {
    FlushOpenGroups(nullptr);  // this group too: the member waits holding nothing
    locks_->Unlock();
    for (const KeyRef& k : keys) locks_->Plan(RawKey(k.db, k.key));
    locks_->Lock(store_.impl().locks());
  }
  txn_ = &group_->txn();
  txn_->Retime(internal::UnitTime{store_.impl().clock().NowNs()});
  txn_->set_locks(locks_, options_.isolate_reads);
  txn_->SetMark();
}

Store::Transaction::~Transaction() {
  if (group_ != nullptr) {
    txn_->RollbackToMark();  // drops what this member staged and did not commit
    return;
  }
  txn_->~Txn();  // drops what was staged
  locks_->Unlock();
  LockSets::Release(locks_);
}

int64_t Store::Transaction::NowMs() const { return txn_->now_ms(); }
int64_t Store::Transaction::NowNs() const { return txn_->now_ns(); }
Status Store::Transaction::Commit() {
  if (group_ != nullptr) {
    // A write the store would refuse now is refused now, as an own unit's would be; the rest
    // waits for the group's write.
    if (!group_->status().ok()) return group_->status();
    if (txn_->StagedSinceMark() && store_.impl().writes_refused()) {
      txn_->RollbackToMark();
      return store_.impl().WriteRefusal();
    }
    txn_->AdvanceMark();
    return group_->MemberCommitted();
  }
  return txn_->Commit(/*durable=*/true, options_.defer_durability);
}
void Store::Transaction::Rollback() {
  if (group_ != nullptr) return txn_->RollbackToMark();
  txn_->Rollback();
}
bool Store::Transaction::conflicted() const { return txn_->conflicted(); }
bool Store::Transaction::shares_group() const { return group_ != nullptr && !group_->empty(); }
void Store::Transaction::MarkConflicted() { static_cast<void>(txn_->ClaimAllFailed()); }
size_t Store::Transaction::staged_writes() const { return txn_->written_count(); }
void Store::Transaction::WrittenKeys(std::vector<KeyRef>* out, uint32_t* flushed_dbs) const {
  for (size_t i = group_ != nullptr ? txn_->written_since_mark() : 0; i < txn_->written_count();
       ++i) {
    int db = 0;
    std::string_view user_key;
    if (internal::DecodeKey(txn_->written_key(i), &db, &user_key)) {
      out->push_back(KeyRef{db, user_key});
    }
  }
  *flushed_dbs = txn_->flushed_dbs();
}

Status Store::Transaction::ClaimWrite(int db, std::string_view key) {
  return txn_->ClaimWrite(RawKey(db, key));
}

Status Store::Transaction::ClaimRead(int db, std::string_view key) {
  if (!options_.isolate_reads) return Status::Ok();
  return txn_->ClaimWrite(RawKey(db, key));
}

Status Store::Transaction::ClaimAll(bool write) {
  if (txn_->holds_all_locks() || (!write && !options_.isolate_reads)) return Status::Ok();
  return txn_->ClaimAllFailed();
}

// ---- CommitGroup

CommitGroup::CommitGroup(Store& store, bool defer_durability)
    : store_(store), defer_durability_(defer_durability), locks_(LockSets::Acquire()) {
  locks_->Lock(store.impl().locks());  // nothing planned: ready for try-locks
  txn_ = new (txn_storage_) Txn(store.impl(), internal::UnitTime{store.impl().clock().NowNs()});
  open_groups.push_back(this);
}

CommitGroup::~CommitGroup() {
  std::erase(open_groups, this);
  static_cast<void>(Flush());
  txn_->~Txn();
  locks_->Unlock();
  LockSets::Release(locks_);
}

Status CommitGroup::Flush() {
  if (members_ > 0) {
    Status s = txn_->Commit(/*durable=*/true, defer_durability_);
    if (status_.ok() && !s.ok()) status_ = s;
    members_ = 0;
  } else {
    txn_->Rollback();
  }
  locks_->Unlock();
  locks_->Lock(store_.impl().locks());
  return status_;
}

Status CommitGroup::MemberCommitted() {
  ++members_;
  if (members_ >= kMaxUnits || locks_->held() >= kMaxStripes || txn_->staged_bytes() >= kMaxBytes) {
    return Flush();
  }
  return status_;
}

// ---- Commit observers

Status Store::Impl::AddCommitObserver(CommitObserver* observer) {
  std::lock_guard<std::mutex> l(observer_mu_);
  const int n = observer_count_.load(std::memory_order_relaxed);
  if (n >= Store::kMaxCommitObservers) {
    return Status::InvalidArgument("too many commit observers");
  }
  observers_[n].store(observer, std::memory_order_relaxed);
  observer_count_.store(n + 1, std::memory_order_release);
  return Status::Ok();
}

void Store::Impl::NotifyCommit(const Txn& txn) {
  const int n = observer_count_.load(std::memory_order_acquire);
  if (n == 0) return;
  thread_local std::vector<KeyRef> written;
  written.clear();
  for (size_t i = 0; i < txn.written_count(); ++i) {
    int db = 0;
    std::string_view user_key;
    if (internal::DecodeKey(txn.written_key(i), &db, &user_key)) {
      written.push_back(KeyRef{db, user_key});
    }
  }
  for (int i = 0; i < n; ++i) {
    observers_[i].load(std::memory_order_relaxed)->OnCommit(written, txn.flushed_dbs());
  }
}

void Store::Impl::NotifyExpired(const Txn& txn) {
  const int n = observer_count_.load(std::memory_order_acquire);
  if (n == 0) return;
  thread_local std::vector<KeyRef> expired;
  expired.clear();
  for (size_t i = 0; i < static_cast<size_t>(txn.expired_found()); ++i) {
    int db = 0;
    std::string_view user_key;
    if (internal::DecodeKey(txn.expired_key(i), &db, &user_key)) {
      expired.push_back(KeyRef{db, user_key});
    }
  }
  for (int i = 0; i < n; ++i) observers_[i].load(std::memory_order_relaxed)->OnExpired(expired);
}

}  // namespace sluice
