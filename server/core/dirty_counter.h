// rdb_changes_since_last_save (INFO persistence): Redis's "dirty" counter, the writes since the
// last SAVE/BGSAVE. A Store::CommitObserver: each committed unit adds the keys it wrote (a key a
// no-op write left alone is not among them, so SETBIT of a bit already set adds nothing, as in
// Redis) and each database it emptied.
#pragma once

#include <atomic>
#include <bit>
#include <cstdint>
#include <span>

#include "server/core/stat_counter.h"
#include "sluice/store.h"

namespace sluice::server {

class DirtyCounter : public CommitObserver {
 public:
  void OnCommit(std::span<const KeyRef> written, uint32_t flushed_dbs) override {
    count_.fetch_add(static_cast<int64_t>(written.size()) + std::popcount(flushed_dbs));
  }
  int64_t load() const { return count_.load(); }
  // A save that began when the counter read `at_start` succeeded: the writes since stay.
  void Saved(int64_t at_start) { count_.fetch_add(-at_start); }

 private:
  StatCounter count_;
};

}  // namespace sluice::server
