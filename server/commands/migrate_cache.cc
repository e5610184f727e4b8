#include "server/commands/migrate_cache.h"

#include <utility>

namespace sluice::server {

MigrateCache::~MigrateCache() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (sweeper_.joinable()) sweeper_.join();
}

bool MigrateCache::Take(const std::string& host, const std::string& port, int timeout_ms,
                        Lease* out) {
  out->target = host + ":" + port;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = entries_.find(out->target);
    if (it != entries_.end()) {
      out->link = std::move(it->second.link);
      out->last_db = it->second.last_db;
      out->reused = true;
      entries_.erase(it);
      return true;
    }
  }
  out->reused = false;
  out->last_db = -1;
  out->link = MigrateLink();
  return out->link.Connect(host, port, timeout_ms);
}

void MigrateCache::Return(Lease&& lease) {
  if (!lease.link.connected()) return;
  std::lock_guard<std::mutex> l(mu_);
  if (stop_ || entries_.count(lease.target) > 0) return;               // the lease's link closes
  if (entries_.size() >= kMaxItems) entries_.erase(entries_.begin());  // as Redis: any one
  entries_[lease.target] = {std::move(lease.link), lease.last_db, std::chrono::steady_clock::now()};
  if (!sweeper_.joinable()) sweeper_ = std::thread([this] { SweepLoop(); });
  wake_.notify_all();
}

size_t MigrateCache::size() const {
  std::lock_guard<std::mutex> l(mu_);
  return entries_.size();
}

// Wakes about once a second while connections are cached (Redis's cron does the same), and
// sleeps until the next Return while none are.
void MigrateCache::SweepLoop() {
  std::unique_lock<std::mutex> l(mu_);
  while (!stop_) {
    if (entries_.empty()) {
      wake_.wait(l, [this] { return stop_ || !entries_.empty(); });
      continue;
    }
    wake_.wait_for(l, std::chrono::seconds(1), [this] { return stop_; });
    const auto now = std::chrono::steady_clock::now();
    for (auto it = entries_.begin(); it != entries_.end();) {
      it = now - it->second.last_use > kIdleTtl ? entries_.erase(it) : std::next(it);
    }
  }
}

MigrateCache& TheMigrateCache() {
  static MigrateCache cache;
  return cache;
}

}  // namespace sluice::server
