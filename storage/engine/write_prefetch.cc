#include "write_prefetch.h"

#include <string_view>

#include "memtable.h"

namespace sluice::internal {
namespace {

thread_local uint64_t prefetched_on_this_thread = 0;

// Collects each element family's keys and hands them to its newest memtable sixteen at a time. The
// key views point into the batch, which outlives the iteration.
class Collector final : public rocksdb::WriteBatch::Handler {
 public:
  explicit Collector(const ElementWriteTargets& targets) : targets_(targets) {}

  rocksdb::Status PutCF(uint32_t cf, const rocksdb::Slice& key, const rocksdb::Slice&) override {
    return Note(cf, key);
  }
  rocksdb::Status DeleteCF(uint32_t cf, const rocksdb::Slice& key) override {
    return Note(cf, key);
  }
  rocksdb::Status SingleDeleteCF(uint32_t cf, const rocksdb::Slice& key) override {
    return Note(cf, key);
  }
  rocksdb::Status MergeCF(uint32_t cf, const rocksdb::Slice& key, const rocksdb::Slice&) override {
    return Note(cf, key);
  }
  rocksdb::Status DeleteRangeCF(uint32_t, const rocksdb::Slice&, const rocksdb::Slice&) override {
    return rocksdb::Status::OK();
  }
  rocksdb::Status PutBlobIndexCF(uint32_t, const rocksdb::Slice&, const rocksdb::Slice&) override {
    return rocksdb::Status::OK();
  }
  void LogData(const rocksdb::Slice&) override {}

  void FlushAll() {
    for (int i = 0; i < targets_.n; ++i) Flush(i);
  }

 private:
  rocksdb::Status Note(uint32_t cf, const rocksdb::Slice& key) {
    for (int i = 0; i < targets_.n; ++i) {
      if (targets_.cf_ids[i] != cf) continue;
      pending_[i][counts_[i]++] = std::string_view(key.data(), key.size());
      if (counts_[i] == NewestMemTable::kMaxKeys) Flush(i);
      break;
    }
    return rocksdb::Status::OK();
  }
  void Flush(int i) {
    if (counts_[i] > 0) targets_.memtables[i]->Prefetch(pending_[i], counts_[i]);
    prefetched_on_this_thread += counts_[i];
    counts_[i] = 0;
  }

  const ElementWriteTargets& targets_;
  std::string_view pending_[ElementWriteTargets::kMax][NewestMemTable::kMaxKeys];
  size_t counts_[ElementWriteTargets::kMax] = {};
};

}  // namespace

void PrefetchElementWrites(const rocksdb::WriteBatch& batch, const ElementWriteTargets& targets) {
  const uint32_t entries = batch.Count();
  if (targets.n == 0 || entries < 2 || entries > kMaxPrefetchedEntries) return;
  Collector collector(targets);
  if (!batch.Iterate(&collector).ok()) return;
  collector.FlushAll();
}

uint64_t ElementWritesPrefetchedOnThisThread() { return prefetched_on_this_thread; }

}  // namespace sluice::internal
