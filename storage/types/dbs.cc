// Operations between logical databases: MOVE (one key to another db) and SWAPDB (two dbs trade
// contents). Keys carry their db in their encoding (engine/encoding.h), so both rewrite what
// they move under the other db's prefix, in the unit's one write.
#include <string>
#include <utility>
#include <vector>

#include "collection.h"
#include "store_impl.h"
#include "txn.h"

namespace sluice {

using internal::Collection;
using internal::EncodeKey;
using internal::Entry;

namespace {

// A key and everything stored for it, read into memory so that its db can be emptied before it
// is written back elsewhere.
struct KeyCopy {
  std::string key;
  Entry entry;  // the key's record (a collection's metadata record, or the whole value)
  std::vector<std::pair<internal::ElementCf, std::pair<std::string, std::string>>> elements;
  internal::CollectionMeta meta;
  int64_t expire_at_ms = internal::kNoExpiry;
};

Status ReadElements(internal::Txn& txn, int db, KeyCopy* copy) {
  auto from = Collection::Open(txn, db, copy->key, copy->entry.kind, /*write=*/false);
  if (!from.ok()) return from.status();
  if (!from->exists()) return Status::NoSuchKey();
  // An inline collection's elements are in its metadata, which the copy carries.
  const uint32_t cfs = from->is_inline() ? 0 : internal::ElementCfsOf(copy->entry.kind);
  for (int i = 0; i < internal::kNumElementCfs; ++i) {
    if ((cfs & (1u << i)) == 0) continue;
    const auto cf = static_cast<internal::ElementCf>(i);
    auto it = from->NewIterator(cf);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      copy->elements.push_back(
          {cf, {std::string(from->ElementOf(it->key())), it->value().ToString()}});
    }
    if (!it->status().ok()) return internal::FromRocks(it->status());
  }
  copy->meta = from->meta();
  copy->expire_at_ms = from->expire_at_ms();
  return Status::Ok();
}

// Writes a KeyCopy under db (whose old contents the unit has deleted).
void WriteCopy(internal::Txn& txn, int db, const KeyCopy& copy) {
  if (!IsCollection(copy.entry.kind)) return txn.Put(EncodeKey(db, copy.key), copy.entry);
  Collection to = Collection::NewAt(txn, db, copy.key, copy.entry.kind);
  for (const auto& [cf, element] : copy.elements) to.Put(cf, element.first, element.second);
  const uint64_t version = to.meta().version;
  to.meta() = copy.meta;
  to.meta().version = version;
  to.set_expire_at_ms(copy.expire_at_ms);
  to.Save();
}

}  // namespace

Result<bool> Store::Transaction::Move(int src_db, int dst_db, std::string_view key) {
  // COPY without REPLACE, then the source goes: value, elements and TTL move together.
  const std::string raw_src = EncodeKey(src_db, key);
  if (Status c = txn_->ClaimWrite(raw_src); !c.ok()) return c;
  Result<bool> copied = Copy(src_db, key, dst_db, key, /*replace=*/false);
  if (copied.ok() && *copied) txn_->Delete(raw_src);
  return copied;
}

Status Store::Transaction::SwapDb(int a, int b) {
  if (Status c = ClaimAll(/*write=*/true); !c.ok()) return c;
  if (a == b) return Status::Ok();
  std::vector<KeyCopy> copies[2];
  const int dbs[2] = {a, b};
  for (int side = 0; side < 2; ++side) {
    auto keys = Keys(dbs[side], "*");
    if (!keys.ok()) return keys.status();
    for (std::string& key : *keys) {
      KeyCopy copy;
      copy.key = std::move(key);
      auto e = txn_->Read(EncodeKey(dbs[side], copy.key));
      if (!e.ok()) return e.status();
      if (!e->has_value()) continue;  // expired between the walk and the read
      copy.entry = std::move(**e);
      if (IsCollection(copy.entry.kind)) {
        if (Status s = ReadElements(*txn_, dbs[side], &copy); !s.ok()) return s;
      }
      copies[side].push_back(std::move(copy));
    }
  }
  txn_->DeleteDb(a);
  txn_->DeleteDb(b);
  for (const KeyCopy& copy : copies[0]) WriteCopy(*txn_, b, copy);
  for (const KeyCopy& copy : copies[1]) WriteCopy(*txn_, a, copy);
  return Status::Ok();
}

}  // namespace sluice
