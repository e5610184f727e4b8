// What the active expiry cycle knows, saved in the `meta` column family when the store closes
// (and once it has been quiet for a while) and restored when it opens again (expiry_state.cc),
// so that a restart does not make the cycle walk the whole keyspace to learn every key's expiry
// again. Internal header.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::internal {

inline constexpr std::string_view kExpiryStateKey = "expiry-state";

// The cycle's state when saved. Valid for the open that finds `seq` to be the store's latest
// sequence number, that is, with nothing written after it (a write after the open that read it
// makes it stale for any later open, crash or not).
struct ExpiryState {
  struct Key {
    std::string raw_key;
    int64_t at_ms;  // exact: its stored expiry; else at most its stored expiry, if it has one
    bool exact;     // no write since the entry was seen; else the key is read again when due
  };
  uint64_t seq = 0;          // the sequence number of the record's own write
  int64_t pass_due_ms = 0;   // the cycle's pass hint (next_expiry_due_ms_); 0: a pass at once
  bool pass_active = false;  // a pass was under way: it resumes at pass_cursor
  std::string pass_cursor;   // where it resumes (encoded key)
  std::string pass_done;     // the last key it handled
  std::vector<Key> due;      // the due list, one entry per key
};

std::string EncodeExpiryState(const ExpiryState& state);
// nullopt when the bytes are not a whole state of this encoding.
std::optional<ExpiryState> DecodeExpiryState(std::string_view bytes);

}  // namespace sluice::internal
