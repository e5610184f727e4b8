// A rocksdb::Iterator that forwards every call to an inner iterator, for the engine's wrappers
// (a unit's bounded view in txn.cc, a pooled lease in iterator_pool.cc) to override only what
// they change. Does not own the inner iterator.
#pragma once

#include <rocksdb/iterator.h>

namespace sluice::internal {

class ForwardingIterator : public rocksdb::Iterator {
 public:
  bool Valid() const override { return inner_->Valid(); }
  void SeekToFirst() override { inner_->SeekToFirst(); }
  void SeekToLast() override { inner_->SeekToLast(); }
  void Seek(const rocksdb::Slice& target) override { inner_->Seek(target); }
  void SeekForPrev(const rocksdb::Slice& target) override { inner_->SeekForPrev(target); }
  void Next() override { inner_->Next(); }
  void Prev() override { inner_->Prev(); }
  rocksdb::Slice key() const override { return inner_->key(); }
  rocksdb::Slice value() const override { return inner_->value(); }
  rocksdb::Status status() const override { return inner_->status(); }

 protected:
  explicit ForwardingIterator(rocksdb::Iterator* inner = nullptr) : inner_(inner) {}
  rocksdb::Iterator* inner() const { return inner_; }
  void set_inner(rocksdb::Iterator* inner) { inner_ = inner; }

 private:
  rocksdb::Iterator* inner_;
};

}  // namespace sluice::internal
