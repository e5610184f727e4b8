#include "server/core/slowlog.h"

#include <algorithm>
#include <ctime>

#include "server/core/redaction.h"

namespace sluice::server {

namespace {

constexpr size_t kMaxArgs = 32;       // Redis's SLOWLOG_ENTRY_MAX_ARGC
constexpr size_t kMaxArgBytes = 128;  // Redis's SLOWLOG_ENTRY_MAX_STRING

// Redis's cut: a longer argument keeps its first 128 bytes and says how many more there were.
std::string CutArg(std::string_view arg) {
  if (arg.size() <= kMaxArgBytes) return std::string(arg);
  return std::string(arg.substr(0, kMaxArgBytes)) + "... (" +
         std::to_string(arg.size() - kMaxArgBytes) + " more bytes)";
}

}  // namespace

void SlowLog::MaybeRecord(int64_t micros, std::span<const std::string_view> args,
                          std::string_view addr, std::string_view name, int64_t threshold_us,
                          int64_t max_len) {
  if (threshold_us < 0 || micros < threshold_us) return;
  SlowLogEntry e;
  e.unix_s = static_cast<int64_t>(std::time(nullptr));
  e.micros = micros;
  const size_t kept = std::min(args.size(), kMaxArgs);
  for (size_t i = 0; i < kept; ++i) {
    if (i == kMaxArgs - 1 && args.size() > kMaxArgs) {
      e.args.push_back("... (" + std::to_string(args.size() - kMaxArgs + 1) + " more arguments)");
    } else if (RedactedArgument(args, i)) {
      e.args.push_back("(redacted)");
    } else {
      e.args.push_back(CutArg(args[i]));
    }
  }
  e.addr = std::string(addr);
  e.name = std::string(name);
  std::lock_guard lock(mu_);
  e.id = next_id_++;
  entries_.push_front(std::move(e));
  while (static_cast<int64_t>(entries_.size()) > std::max<int64_t>(max_len, 0)) {
    entries_.pop_back();
  }
}

std::vector<SlowLogEntry> SlowLog::Get(int64_t count) const {
  std::lock_guard lock(mu_);
  const size_t n = std::min(entries_.size(), static_cast<size_t>(std::max<int64_t>(count, 0)));
  return std::vector<SlowLogEntry>(entries_.begin(), entries_.begin() + static_cast<long>(n));
}

int64_t SlowLog::Len() const {
  std::lock_guard lock(mu_);
  return static_cast<int64_t>(entries_.size());
}

void SlowLog::Reset() {
  std::lock_guard lock(mu_);
  entries_.clear();
}

}  // namespace sluice::server
