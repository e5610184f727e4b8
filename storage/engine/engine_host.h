// EngineHost: the narrow view of the open engine that its background parts work through (the
// active expiry cycle and its saved state, expiry_cycle.h; loading the keyspace counts,
// keyspace_counts.h), so that they reach the engine by this interface, never by Store::Impl's
// fields. Store::Impl implements it (and is final, so its own calls are not virtual). Internal
// header.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/status.h>
#include <rocksdb/write_batch.h>

#include "sluice/clock.h"
#include "sluice/status.h"
#include "sluice/store.h"

namespace sluice::internal {

class LockPool;

Status FromRocks(const rocksdb::Status& s);  // OK stays OK; anything else is kIOError

class EngineHost {
 public:
  virtual const Clock& clock() const = 0;
  virtual const Options& options() const = 0;
  // The open database, and its bookkeeping column family (version mark, count records, the
  // expiry state). Valid while the store is open.
  virtual rocksdb::DB* db() const = 0;
  virtual rocksdb::ColumnFamilyHandle* meta_cf() const = 0;
  virtual LockPool& locks() = 0;
  // Whether a write error latched the store read-only (Store::Impl::NoteWriteError).
  virtual bool writes_refused() const = 0;
  // Applies batch following the durability policy (Store::Impl::Write has the contract).
  virtual Status Write(rocksdb::WriteBatch* batch, bool durable = true, bool defer = false,
                       bool* applied = nullptr) = 0;
  // The engine a unit of work (Txn, txn.h) runs on: opaque to the callers of this interface,
  // which only hand it to Txn (the expiry cycle's removals are units like any other).
  virtual Store::Impl& unit_engine() = 0;

 protected:
  ~EngineHost() = default;  // not deleted through this interface
};

}  // namespace sluice::internal
