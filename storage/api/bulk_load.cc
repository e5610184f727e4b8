#include "sluice/bulk_load.h"

#include <span>

#include "encoding.h"
#include "store_impl.h"
#include "txn.h"

namespace sluice {

BulkLoad::BulkLoad(Store& store, BulkLoadOptions options) : store_(store), options_(options) {}

BulkLoad::~BulkLoad() = default;  // an open unit rolls back when it ends uncommitted

Store::Transaction& BulkLoad::Unit() {
  if (!unit_) {
    // Every stripe, once per unit: the keys need no lock each. Deferred durability: Finish()
    // fsyncs once for the whole load.
    unit_.emplace(
        store_, std::span<const KeyRef>{},
        TransactionOptions{.all_keys = true, .isolate_reads = false, .defer_durability = true});
    unit_->txn().set_keys_new(true);
    in_unit_ = 0;
  }
  return *unit_;
}

Status BulkLoad::Added() {
  ++added_;
  if (++in_unit_ < options_.keys_per_unit &&
      unit_->txn().staged_bytes() < options_.bytes_per_unit) {
    return Status::Ok();
  }
  Status s = unit_->Commit();
  unit_.reset();
  return s;
}

Status BulkLoad::Add(int db, std::string_view key, const WholeValue& value, int64_t expire_at_ms) {
  Store::Transaction& unit = Unit();
  if (value.kind == ValueKind::kString) {
    // A plain SET with its expiry is a blind write (strings.cc): no read of the new key.
    SetOptions options;
    if (expire_at_ms != 0) options.expiry = {ExpiryChange::Kind::kSetAt, expire_at_ms};
    if (Status s = unit.Set(db, key, value.string, options).status(); !s.ok()) return s;
  } else if (Status s = unit.WriteWhole(db, key, value, expire_at_ms); !s.ok()) {
    return s;
  }
  return Added();
}

Status BulkLoad::AddEntry(int db, std::string_view key, const Store::Transaction::RawEntry& entry) {
  if (IsCollection(entry.kind)) return Status::InvalidArgument("a collection is no single entry");
  Store::Transaction& unit = Unit();
  internal::Txn& txn = unit.txn();
  const internal::RawKey raw(db, key);
  if (Status c = txn.ClaimWrite(raw); !c.ok()) return c;  // held: the unit has every stripe
  // WriteEntry without its DEL of an older value: the key is new.
  txn.Put(raw, entry.kind, entry.expire_at_ms == 0 ? internal::kNoExpiry : entry.expire_at_ms,
          entry.payload);
  return Added();
}

Status BulkLoad::Finish() {
  if (unit_) {
    Status s = unit_->Commit();
    unit_.reset();
    if (!s.ok()) return s;
  }
  return store_.SyncWal();
}

}  // namespace sluice
