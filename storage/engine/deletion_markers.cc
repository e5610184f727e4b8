#include "deletion_markers.h"

#include <rocksdb/utilities/table_properties_collectors.h>

#include <utility>

namespace sluice::internal {
namespace {

class CountingSingleDeletes final : public rocksdb::TablePropertiesCollector {
 public:
  explicit CountingSingleDeletes(rocksdb::TablePropertiesCollector* inner) : inner_(inner) {}

  rocksdb::Status AddUserKey(const rocksdb::Slice& key, const rocksdb::Slice& value,
                             rocksdb::EntryType type, rocksdb::SequenceNumber seq,
                             uint64_t file_size) override {
    if (type == rocksdb::kEntrySingleDelete) type = rocksdb::kEntryDelete;
    return inner_->AddUserKey(key, value, type, seq, file_size);
  }
  void BlockAdd(uint64_t uncompressed, uint64_t compressed_fast,
                uint64_t compressed_slow) override {
    inner_->BlockAdd(uncompressed, compressed_fast, compressed_slow);
  }
  rocksdb::Status Finish(rocksdb::UserCollectedProperties* properties) override {
    return inner_->Finish(properties);
  }
  rocksdb::UserCollectedProperties GetReadableProperties() const override {
    return inner_->GetReadableProperties();
  }
  const char* Name() const override { return inner_->Name(); }
  bool NeedCompact() const override { return inner_->NeedCompact(); }

 private:
  std::unique_ptr<rocksdb::TablePropertiesCollector> inner_;
};

class Factory final : public rocksdb::TablePropertiesCollectorFactory {
 public:
  explicit Factory(std::shared_ptr<rocksdb::TablePropertiesCollectorFactory> inner)
      : inner_(std::move(inner)) {}
  rocksdb::TablePropertiesCollector* CreateTablePropertiesCollector(
      rocksdb::TablePropertiesCollectorFactory::Context context) override {
    return new CountingSingleDeletes(inner_->CreateTablePropertiesCollector(context));
  }
  const char* Name() const override { return "SluiceDeletionMarkers"; }

 private:
  const std::shared_ptr<rocksdb::TablePropertiesCollectorFactory> inner_;
};

}  // namespace

std::shared_ptr<rocksdb::TablePropertiesCollectorFactory> NewDeletionMarkerCollectorFactory(
    size_t window, size_t trigger, double ratio) {
  return std::make_shared<Factory>(
      rocksdb::NewCompactOnDeletionCollectorFactory(window, trigger, ratio));
}

}  // namespace sluice::internal
