// The slow log (SLOWLOG): commands that ran at least slowlog-log-slower-than microseconds, the
// newest first, at most slowlog-max-len of them, each as Redis records it (id, Unix time,
// microseconds, the arguments cut to 32 and each to 128 bytes, secrets redacted (redaction.h),
// the client's address and name).
// Thread-safe: every I/O thread records into the one log.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::server {

struct SlowLogEntry {
  int64_t id = 0;
  int64_t unix_s = 0;
  int64_t micros = 0;
  std::vector<std::string> args;
  std::string addr;
  std::string name;
};

class SlowLog {
 public:
  // Records the command when threshold_us >= 0 and micros >= threshold_us, then trims the log
  // to max_len entries.
  void MaybeRecord(int64_t micros, std::span<const std::string_view> args, std::string_view addr,
                   std::string_view name, int64_t threshold_us, int64_t max_len);
  // The newest `count` entries (all when count exceeds the length), newest first.
  std::vector<SlowLogEntry> Get(int64_t count) const;
  int64_t Len() const;
  void Reset();

 private:
  mutable std::mutex mu_;
  std::deque<SlowLogEntry> entries_;  // newest first
  int64_t next_id_ = 0;
};

}  // namespace sluice::server
