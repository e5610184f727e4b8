#include "server/core/tracking.h"

#include <algorithm>
#include <utility>

#include "server/core/client_state.h"
#include "server/core/server_state.h"

namespace sluice::server {

namespace {

using tracking_detail::t_committer;
using tracking_detail::t_suppressed;

void AppendBulk(std::string* out, std::string_view s) {
  out->push_back('$');
  out->append(std::to_string(s.size()));
  out->append("\r\n");
  out->append(s);
  out->append("\r\n");
}

// "*1\r\n$3\r\nkey\r\n"
std::string OneKeyArray(std::string_view key) {
  std::string out = "*1\r\n";
  AppendBulk(&out, key);
  return out;
}

int RespOf(const ClientState& c) { return c.outbox.resp(); }

OutputBufferLimit LimitFor(ServerState& server, const ClientState& c) {
  return c.subscribed() ? server.pubsub_output_buffer_limit() : server.output_buffer_limit();
}

}  // namespace

void TrackingRegistry::Enable(ClientState& client, uint64_t redirect, uint32_t options,
                              std::span<const std::string_view> prefixes) {
  std::lock_guard l(mu_);
  Client& entry = tracking_[client.id];
  if (entry.state == nullptr) {
    entry.state = &client;
    clients_.fetch_add(1, std::memory_order_relaxed);
  }
  uint32_t flags = client.tracking.load(std::memory_order_relaxed);
  flags |= kTrackingOn;
  flags &=
      ~(kTrackingBrokenRedir | kTrackingBcast | kTrackingOptin | kTrackingOptout | kTrackingNoloop);
  client.tracking_redirect.store(redirect, std::memory_order_relaxed);
  if (options & kTrackingBcast) {
    flags |= kTrackingBcast;
    auto add = [&](std::string_view p) {
      std::string prefix(p);
      prefixes_[prefix].insert(client.id);
      entry.prefixes.insert(std::move(prefix));
    };
    if (prefixes.empty()) add("");
    for (std::string_view p : prefixes) add(p);
  }
  flags |= options & (kTrackingOptin | kTrackingOptout | kTrackingNoloop);
  client.tracking.store(flags, std::memory_order_relaxed);
}

void TrackingRegistry::Disable(ClientState& client) {
  std::lock_guard l(mu_);
  auto it = tracking_.find(client.id);
  if (it == tracking_.end()) return;
  for (const std::string& p : it->second.prefixes) {
    auto pit = prefixes_.find(p);
    if (pit == prefixes_.end()) continue;
    pit->second.erase(client.id);
    if (pit->second.empty()) prefixes_.erase(pit);
  }
  tracking_.erase(it);
  clients_.fetch_sub(1, std::memory_order_relaxed);
  client.tracking.store(0, std::memory_order_relaxed);
}

std::optional<TrackingRegistry::Collision> TrackingRegistry::FindCollision(
    const ClientState& client, std::span<const std::string_view> prefixes) {
  auto overlap = [](std::string_view a, std::string_view b) {
    const size_t n = std::min(a.size(), b.size());
    return a.substr(0, n) == b.substr(0, n);
  };
  std::lock_guard l(mu_);
  auto it = tracking_.find(client.id);
  for (size_t i = 0; i < prefixes.size(); ++i) {
    if (it != tracking_.end()) {
      for (const std::string& have : it->second.prefixes) {
        if (overlap(have, prefixes[i])) {
          return Collision{std::string(prefixes[i]), have, true};
        }
      }
    }
    for (size_t j = i + 1; j < prefixes.size(); ++j) {
      if (overlap(prefixes[i], prefixes[j])) {
        return Collision{std::string(prefixes[i]), std::string(prefixes[j]), false};
      }
    }
  }
  return std::nullopt;
}

std::vector<std::string> TrackingRegistry::Prefixes(const ClientState& client) {
  std::lock_guard l(mu_);
  auto it = tracking_.find(client.id);
  if (it == tracking_.end()) return {};
  return {it->second.prefixes.begin(), it->second.prefixes.end()};
}

int64_t TrackingRegistry::total_prefixes() const {
  std::lock_guard l(mu_);
  return static_cast<int64_t>(prefixes_.size());
}

void TrackingRegistry::Remember(ClientState& client, std::span<const std::string_view> keys) {
  const uint32_t flags = client.tracking.load(std::memory_order_relaxed);
  if (!(flags & kTrackingOn) || (flags & kTrackingBcast)) return;
  const bool caching = (flags & kTrackingCaching) != 0;
  if (((flags & kTrackingOptin) && !caching) || ((flags & kTrackingOptout) && caching)) return;
  if (keys.empty()) return;
  std::lock_guard l(mu_);
  for (std::string_view key : keys) {
    auto [it, inserted] = table_.try_emplace(std::string(key));
    if (inserted) total_keys_.fetch_add(1, std::memory_order_relaxed);
    auto& ids = it->second;
    if (std::find(ids.begin(), ids.end(), client.id) == ids.end()) {
      ids.push_back(client.id);
      total_items_.fetch_add(1, std::memory_order_relaxed);
    }
  }
}

void TrackingRegistry::RemoveKeyLocked(
    std::unordered_map<std::string, std::vector<uint64_t>>::iterator it) {
  total_items_.fetch_sub(static_cast<int64_t>(it->second.size()), std::memory_order_relaxed);
  total_keys_.fetch_sub(1, std::memory_order_relaxed);
  table_.erase(it);
}

void TrackingRegistry::EnforceLimit() {
  if (!OverLimit()) return;
  std::lock_guard l(mu_);
  const auto max = static_cast<size_t>(max_keys_.load(std::memory_order_relaxed));
  // Redis walks its table at random; an unordered_map's order is as arbitrary.
  while (max > 0 && table_.size() > max) {
    auto it = table_.begin();
    const std::string key = it->first;
    const std::vector<uint64_t> ids = it->second;
    RemoveKeyLocked(it);
    const std::string array = OneKeyArray(key);
    for (uint64_t id : ids) {
      auto t = tracking_.find(id);
      if (t == tracking_.end()) continue;
      const uint32_t flags = t->second.state->tracking.load(std::memory_order_relaxed);
      if (flags & kTrackingBcast) continue;
      SendLocked(t->second, array);
    }
  }
}

void TrackingRegistry::SendLocked(Client& target, std::string_view keys_array) {
  ClientState& c = *target.state;
  const uint64_t redirect = c.tracking_redirect.load(std::memory_order_relaxed);
  if (redirect == 0) {
    if (RespOf(c) < 3) return;  // RESP2 without a redirect: nowhere to say it
    std::string body;
    AppendBulk(&body, "invalidate");
    body.append(keys_array);
    c.outbox.Push(2, body, LimitFor(*server_, c));
    return;
  }
  const bool found = server_->clients().WithClient(redirect, [&](ClientState& to) {
    std::string body;
    if (RespOf(to) >= 3) {
      AppendBulk(&body, "invalidate");
      body.append(keys_array);
      to.outbox.Push(2, body, LimitFor(*server_, to));
    } else if (to.subscribed()) {
      AppendBulk(&body, "message");
      AppendBulk(&body, "__redis__:invalidate");
      body.append(keys_array);
      to.outbox.Push(3, body, LimitFor(*server_, to));
    }
  });
  if (found) return;
  c.tracking.fetch_or(kTrackingBrokenRedir, std::memory_order_relaxed);
  if (RespOf(c) >= 3) {
    std::string body;
    AppendBulk(&body, "tracking-redir-broken");
    body.append(":" + std::to_string(redirect) + "\r\n");
    c.outbox.Push(2, body, LimitFor(*server_, c));
  }
}

void TrackingRegistry::SendNullLocked(Client& target) {
  // The null as the tracking client speaks (Redis: shared.null[c->resp]).
  SendLocked(target, RespOf(*target.state) >= 3 ? "_\r\n" : "$-1\r\n");
}

void TrackingRegistry::InvalidateLocked(std::span<const KeyRef> keys, ClientState* writer) {
  // BCAST: the keys under each prefix, each with the client that wrote it last.
  std::map<std::string_view, std::map<std::string, ClientState*>> bcast;
  for (const KeyRef& k : keys) {
    for (const auto& [prefix, ids] : prefixes_) {
      if (k.key.substr(0, prefix.size()) == prefix) bcast[prefix][std::string(k.key)] = writer;
    }
    auto it = table_.find(std::string(k.key));
    if (it == table_.end()) continue;
    const std::vector<uint64_t> ids = it->second;
    RemoveKeyLocked(it);
    const std::string array = OneKeyArray(k.key);
    for (uint64_t id : ids) {
      auto t = tracking_.find(id);
      if (t == tracking_.end()) continue;
      const uint32_t flags = t->second.state->tracking.load(std::memory_order_relaxed);
      if (flags & kTrackingBcast) continue;
      if ((flags & kTrackingNoloop) && t->second.state == writer) continue;
      SendLocked(t->second, array);
    }
  }
  for (const auto& [prefix, written] : bcast) {
    auto pit = prefixes_.find(std::string(prefix));
    if (pit == prefixes_.end()) continue;
    for (uint64_t id : pit->second) {
      auto t = tracking_.find(id);
      if (t == tracking_.end()) continue;
      const bool noloop =
          (t->second.state->tracking.load(std::memory_order_relaxed) & kTrackingNoloop) != 0;
      std::string body;
      size_t n = 0;
      for (const auto& [key, by] : written) {
        if (noloop && by == t->second.state) continue;
        AppendBulk(&body, key);
        ++n;
      }
      if (n == 0) continue;
      SendLocked(t->second, "*" + std::to_string(n) + "\r\n" + body);
    }
  }
}

void TrackingRegistry::OnCommit(std::span<const KeyRef> written, uint32_t flushed_dbs) {
  if (!active() && total_keys_.load(std::memory_order_relaxed) == 0) return;
  if (t_suppressed) return;
  std::lock_guard l(mu_);
  if (!tracking_.empty()) InvalidateLocked(written, t_committer);
  if (flushed_dbs != 0) {
    // FLUSHDB/FLUSHALL: every tracking client hears a null; the whole table goes (as Redis).
    for (auto& [id, client] : tracking_) SendNullLocked(client);
    table_.clear();
    total_keys_.store(0, std::memory_order_relaxed);
    total_items_.store(0, std::memory_order_relaxed);
  } else if (tracking_.empty()) {
    // Nobody tracks: written keys still leave the table (Redis forgets them as it writes).
    for (const KeyRef& k : written) {
      auto it = table_.find(std::string(k.key));
      if (it != table_.end()) RemoveKeyLocked(it);
    }
  }
}

void TrackingRegistry::OnExpired(std::span<const KeyRef> expired) {
  if (!active() && total_keys_.load(std::memory_order_relaxed) == 0) return;
  std::lock_guard l(mu_);
  if (!tracking_.empty()) {
    InvalidateLocked(expired, t_committer);
    return;
  }
  for (const KeyRef& k : expired) {
    auto it = table_.find(std::string(k.key));
    if (it != table_.end()) RemoveKeyLocked(it);
  }
}

}  // namespace sluice::server
