// Store::Transaction::ReadEntry / WriteEntry: a single-entry key (a string or a limiter state)
// moved as its stored bytes, for replication between Sluice nodes.
#include <string>
#include <string_view>

#include "collection.h"
#include "store_impl.h"
#include "txn.h"

namespace sluice {

using internal::kNoExpiry;
using internal::RawKey;

Result<std::optional<Store::Transaction::RawEntry>> Store::Transaction::ReadEntry(
    int db, std::string_view key) {
  const RawKey raw(db, key);
  if (Status c = txn_->ClaimRead(raw); !c.ok()) return c;
  auto e = txn_->ReadView(raw);
  if (!e.ok()) return e.status();
  if (!e->has_value()) return std::optional<RawEntry>();
  if (IsCollection((*e)->kind)) return Status::WrongType();
  RawEntry out;
  out.kind = (*e)->kind;
  out.expire_at_ms = (*e)->expire_at_ms == kNoExpiry ? 0 : (*e)->expire_at_ms;
  out.payload.assign((*e)->payload);
  return std::optional<RawEntry>(std::move(out));
}

Status Store::Transaction::WriteEntry(int db, std::string_view key, const RawEntry& entry) {
  if (IsCollection(entry.kind)) return Status::InvalidArgument("a collection is no single entry");
  const std::string_view keys[] = {key};
  if (Result<int64_t> d = Del(db, keys); !d.ok()) return d.status();
  const RawKey raw(db, key);
  if (Status c = txn_->ClaimWrite(raw); !c.ok()) return c;
  txn_->Put(raw, entry.kind, entry.expire_at_ms == 0 ? kNoExpiry : entry.expire_at_ms,
            entry.payload);
  return Status::Ok();
}

}  // namespace sluice
