// The replica's look-ahead over the primary's stream: before applying the commands one read
// brought, warms the CPU caches for their keys' newest memtable entries (Store::PrefetchKeys,
// as a client connection does for a pipelined batch: server/net/connection.cc), so the
// lookups' cache misses overlap instead of stalling the apply thread one key at a time; and
// the keys' slots of OBJECT IDLETIME's clock (server/core/key_access.h), which the apply stamps.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "protocol/request_parser.h"
#include "server/core/dispatcher.h"
#include "sluice/store.h"

namespace sluice::server::replication {

class ApplyPrefetch {
 public:
  ApplyPrefetch(Store& store, const Dispatcher& dispatcher)
      : store_(store), dispatcher_(dispatcher) {}

  // Call before applying the command that starts at `pos` of `data` (the unapplied bytes, from
  // the same buffer position on every call of one read): when the previous look-ahead is used
  // up, parses ahead from `pos` up to Store::kPrefetchKeys keyed commands and prefetches their
  // first keys, in database `db` (what SELECT was in force at `pos`; a SELECT met ahead
  // switches the database for the keys after it). Changes nothing; never fails.
  void Before(std::string_view data, size_t pos, int db);
  // The buffer was consumed or compacted: the next Before starts a new look-ahead.
  void Reset() { until_ = 0; }

 private:
  void Flush(int db);

  Store& store_;
  const Dispatcher& dispatcher_;
  protocol::RequestParser parser_;
  size_t until_ = 0;  // data positions below this were looked at
  std::string_view keys_[Store::kPrefetchKeys];
  size_t n_ = 0;
  std::vector<int> positions_;
};

}  // namespace sluice::server::replication
