// LCS as a Store::Transaction operation: reads both strings (a missing key is empty) and runs
// the table (lcs.h), bounded as Redis bounds it.
#include <string>

#include "lcs.h"
#include "scratch.h"
#include "store_impl.h"
#include "string_access.h"
#include "txn.h"

namespace sluice {

using internal::RawKey;

Result<Store::Transaction::LcsReply> Store::Transaction::Lcs(int db, std::string_view a,
                                                             std::string_view b,
                                                             int64_t min_match_len) {
  std::string values[2];
  const std::string_view keys[2] = {a, b};
  for (int k = 0; k < 2; ++k) {
    const RawKey raw(db, keys[k]);
    if (Status c = txn_->ClaimRead(raw); !c.ok()) return c;
    auto cur = internal::ReadString(*txn_, raw);
    if (!cur.ok()) return cur.status();
    if (cur->has_value()) values[k] = std::move((*cur)->payload);
  }
  if (lcs::TableBytes(values[0], values[1]) >
      static_cast<uint64_t>(txn_->impl().max_value_bytes())) {
    return Status::InvalidArgument(
        "Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
  }
  return lcs::Compute(values[0], values[1], min_match_len);
}

}  // namespace sluice
