#include "server/core/watch.h"

#include <algorithm>

#include "server/core/client_state.h"

namespace sluice::server {

std::string WatchRegistry::Slot(int db, std::string_view key) {
  std::string slot(1, static_cast<char>(db));
  slot.append(key);
  return slot;
}

void WatchRegistry::Watch(ClientState* client, int db, std::string_view key, bool existed) {
  std::lock_guard<std::mutex> l(mu_);
  auto& watchers = by_key_[Slot(db, key)];
  for (const Watcher& w : watchers) {
    if (w.client == client) return;  // WATCH k k: once
  }
  watchers.push_back({client, existed});
  watches_.fetch_add(1, std::memory_order_relaxed);
}

void WatchRegistry::UnwatchAll(ClientState* client) {
  if (!client->watched.empty()) {
    std::lock_guard<std::mutex> l(mu_);
    for (const WatchedKey& wk : client->watched) {
      auto it = by_key_.find(Slot(wk.db, wk.key));
      if (it == by_key_.end()) continue;
      auto& watchers = it->second;
      const size_t before = watchers.size();
      std::erase_if(watchers, [&](const Watcher& w) { return w.client == client; });
      watches_.fetch_sub(static_cast<int64_t>(before - watchers.size()), std::memory_order_relaxed);
      if (watchers.empty()) by_key_.erase(it);
    }
    client->watched.clear();
  }
  client->watch_dirty.store(false, std::memory_order_relaxed);
}

void WatchRegistry::OnCommit(std::span<const KeyRef> written, uint32_t flushed_dbs) {
  if (watches_.load(std::memory_order_relaxed) == 0) return;
  std::lock_guard<std::mutex> l(mu_);
  std::string slot;
  for (const KeyRef& k : written) {
    slot.assign(1, static_cast<char>(k.db));
    slot.append(k.key);
    auto it = by_key_.find(slot);
    if (it == by_key_.end()) continue;
    for (const Watcher& w : it->second)
      w.client->watch_dirty.store(true, std::memory_order_relaxed);
  }
  if (flushed_dbs == 0) return;
  // A flushed key that existed when watched and was not written since still existed at the
  // flush; one written since has dirtied its watchers already. So "existed when watched" is
  // Redis's "existed when flushed".
  for (const auto& [key_slot, watchers] : by_key_) {
    const int db = static_cast<unsigned char>(key_slot[0]);
    if ((flushed_dbs & (1u << db)) == 0) continue;
    for (const Watcher& w : watchers) {
      if (w.existed) w.client->watch_dirty.store(true, std::memory_order_relaxed);
    }
  }
}

}  // namespace sluice::server
