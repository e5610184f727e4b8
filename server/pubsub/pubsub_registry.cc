#include "server/pubsub/pubsub_registry.h"

#include <algorithm>
#include <mutex>

#include "protocol/reply_writer.h"
#include "server/core/server_state.h"
#include "sluice/glob.h"

namespace sluice::server {

namespace {

size_t Index(ChannelKind kind) { return static_cast<size_t>(kind); }

// The elements of a message frame after its header: bulk strings, rendered once per publish
// into a per-thread buffer (keeps its capacity: no steady-state allocation).
std::string& RenderBody(std::initializer_list<std::string_view> elements) {
  thread_local std::string body;
  body.clear();
  protocol::ReplyWriter writer(&body);
  for (std::string_view e : elements) writer.Bulk(e);
  return body;
}

}  // namespace

void PubSubRegistry::AddSubscriber(SubscriberMap& map, std::string_view name, ClientState* client) {
  auto it = map.find(name);
  if (it == map.end()) it = map.emplace(std::string(name), Subscribers{}).first;
  it->second.push_back(client);
}

void PubSubRegistry::RemoveSubscriber(SubscriberMap& map, std::string_view name,
                                      ClientState* client) {
  auto it = map.find(name);
  if (it == map.end()) return;
  Subscribers& subs = it->second;
  subs.erase(std::find(subs.begin(), subs.end(), client));
  if (subs.empty()) map.erase(it);
}

void PubSubRegistry::UpdateCounts(ClientState& client, const ClientSubscriptions& subs) const {
  client.sub_channels.store(static_cast<int32_t>(subs.channels[0].size()),
                            std::memory_order_relaxed);
  client.sub_shard.store(static_cast<int32_t>(subs.channels[1].size()), std::memory_order_relaxed);
  client.sub_patterns.store(static_cast<int32_t>(subs.patterns.size()), std::memory_order_relaxed);
}

bool PubSubRegistry::Subscribe(ClientState& client, ChannelKind kind, std::string_view channel) {
  std::unique_lock lock(mu_);
  ClientSubscriptions& subs = clients_[&client];
  if (!subs.channels[Index(kind)].emplace(channel).second) return false;
  AddSubscriber(channels_[Index(kind)], channel, &client);
  UpdateCounts(client, subs);
  return true;
}

bool PubSubRegistry::Unsubscribe(ClientState& client, ChannelKind kind, std::string_view channel) {
  std::unique_lock lock(mu_);
  auto it = clients_.find(&client);
  if (it == clients_.end()) return false;
  NameSet& names = it->second.channels[Index(kind)];
  auto name = names.find(channel);
  if (name == names.end()) return false;
  names.erase(name);
  RemoveSubscriber(channels_[Index(kind)], channel, &client);
  UpdateCounts(client, it->second);
  return true;
}

bool PubSubRegistry::SubscribePattern(ClientState& client, std::string_view pattern) {
  std::unique_lock lock(mu_);
  ClientSubscriptions& subs = clients_[&client];
  if (std::find(subs.patterns.begin(), subs.patterns.end(), pattern) != subs.patterns.end()) {
    return false;
  }
  subs.patterns.emplace_back(pattern);
  AddSubscriber(patterns_, pattern, &client);
  UpdateCounts(client, subs);
  return true;
}

bool PubSubRegistry::UnsubscribePattern(ClientState& client, std::string_view pattern) {
  std::unique_lock lock(mu_);
  auto it = clients_.find(&client);
  if (it == clients_.end()) return false;
  std::vector<std::string>& patterns = it->second.patterns;
  auto p = std::find(patterns.begin(), patterns.end(), pattern);
  if (p == patterns.end()) return false;
  patterns.erase(p);
  RemoveSubscriber(patterns_, pattern, &client);
  UpdateCounts(client, it->second);
  return true;
}

std::vector<std::string> PubSubRegistry::ChannelsOf(const ClientState& client,
                                                    ChannelKind kind) const {
  std::shared_lock lock(mu_);
  auto it = clients_.find(&client);
  if (it == clients_.end()) return {};
  const NameSet& names = it->second.channels[Index(kind)];
  return std::vector<std::string>(names.begin(), names.end());
}

std::vector<std::string> PubSubRegistry::PatternsOf(const ClientState& client) const {
  std::shared_lock lock(mu_);
  auto it = clients_.find(&client);
  return it == clients_.end() ? std::vector<std::string>{} : it->second.patterns;
}

void PubSubRegistry::ForgetClient(ClientState& client) {
  // The counts change only on the client's own thread, this one: no lock for a client that
  // never subscribed (every connection's close comes here).
  if (!client.subscribed()) {
    // Unless DropShardChannels is under way: it may have dropped the counts to zero and still
    // be queueing this client's push (the lock below waits for it).
    std::atomic_thread_fence(std::memory_order_acquire);
    if (dropping_.load(std::memory_order_acquire) == 0) return;
  }
  std::unique_lock lock(mu_);
  auto it = clients_.find(&client);
  if (it == clients_.end()) return;
  for (size_t kind = 0; kind < 2; ++kind) {
    for (const std::string& name : it->second.channels[kind]) {
      RemoveSubscriber(channels_[kind], name, &client);
    }
  }
  for (const std::string& pattern : it->second.patterns) {
    RemoveSubscriber(patterns_, pattern, &client);
  }
  clients_.erase(it);
  UpdateCounts(client, ClientSubscriptions{});
}

int64_t PubSubRegistry::Deliver(const Subscribers& subscribers, size_t n,
                                std::string_view body) const {
  const OutputBufferLimit limit = server_.pubsub_output_buffer_limit();
  for (ClientState* client : subscribers) client->outbox.Push(n, body, limit);
  return static_cast<int64_t>(subscribers.size());
}

template <typename F>
void PubSubRegistry::ForEachReceiverSet(ChannelKind kind, std::string_view channel, F&& f) const {
  const SubscriberMap& channels = channels_[Index(kind)];
  if (auto it = channels.find(channel); it != channels.end()) f(nullptr, it->second);
  if (kind != ChannelKind::kGlobal) return;
  for (const auto& [pattern, subscribers] : patterns_) {
    if (GlobMatch(pattern, channel)) f(&pattern, subscribers);
  }
}

int64_t PubSubRegistry::Publish(std::string_view channel, std::string_view message) {
  std::shared_lock lock(mu_);
  int64_t receivers = 0;
  ForEachReceiverSet(ChannelKind::kGlobal, channel,
                     [&](const std::string* pattern, const Subscribers& subscribers) {
                       receivers +=
                           pattern == nullptr
                               ? Deliver(subscribers, 3, RenderBody({"message", channel, message}))
                               : Deliver(subscribers, 4,
                                         RenderBody({"pmessage", *pattern, channel, message}));
                     });
  return receivers;
}

int64_t PubSubRegistry::PublishShard(std::string_view channel, std::string_view message) {
  std::shared_lock lock(mu_);
  int64_t receivers = 0;
  ForEachReceiverSet(ChannelKind::kShard, channel, [&](const std::string*, const Subscribers& s) {
    receivers += Deliver(s, 3, RenderBody({"smessage", channel, message}));
  });
  return receivers;
}

int64_t PubSubRegistry::Receivers(ChannelKind kind, std::string_view channel) const {
  std::shared_lock lock(mu_);
  int64_t receivers = 0;
  ForEachReceiverSet(kind, channel, [&](const std::string*, const Subscribers& subscribers) {
    receivers += static_cast<int64_t>(subscribers.size());
  });
  return receivers;
}

size_t PubSubRegistry::DropShardChannels(
    const std::function<int(std::string_view channel)>& lost_slot) {
  // Announced before any count changes (the release fence orders the two for ForgetClient's
  // acquire fence): a client whose counts this drops to zero is not closed past the lock while
  // its push is being queued.
  dropping_.fetch_add(1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  size_t dropped = 0;
  {
    std::unique_lock lock(mu_);
    SubscriberMap& channels = channels_[Index(ChannelKind::kShard)];
    std::vector<std::pair<int, std::string>> lost;
    for (const auto& entry : channels) {
      if (int slot = lost_slot(entry.first); slot >= 0) lost.emplace_back(slot, entry.first);
    }
    std::sort(lost.begin(), lost.end());
    const OutputBufferLimit limit = server_.pubsub_output_buffer_limit();
    for (const auto& [slot, name] : lost) {
      auto it = channels.find(name);
      for (ClientState* client : it->second) {
        auto subs = clients_.find(client);
        NameSet& shard = subs->second.channels[Index(ChannelKind::kShard)];
        shard.erase(name);
        thread_local std::string body;
        body.clear();
        protocol::ReplyWriter writer(&body);
        writer.Bulk("sunsubscribe");
        writer.Bulk(name);
        writer.Integer(static_cast<int64_t>(shard.size()));
        // The counts first, as Redis clears CLIENT_PUBSUB before the client can read the
        // push: a client that reads it and sends a command is out of pub/sub mode.
        UpdateCounts(*client, subs->second);
        client->outbox.Push(3, body, limit);
        const ClientSubscriptions& left = subs->second;
        if (left.channels[0].empty() && left.channels[1].empty() && left.patterns.empty()) {
          clients_.erase(subs);
        }
      }
      channels.erase(it);
    }
    dropped = lost.size();
  }
  dropping_.fetch_sub(1, std::memory_order_release);
  return dropped;
}

std::vector<std::string> PubSubRegistry::ActiveChannels(
    ChannelKind kind, std::optional<std::string_view> pattern) const {
  std::shared_lock lock(mu_);
  std::vector<std::string> names;
  for (const auto& entry : channels_[Index(kind)]) {
    if (!pattern || GlobMatch(*pattern, entry.first)) names.push_back(entry.first);
  }
  return names;
}

int64_t PubSubRegistry::NumSub(ChannelKind kind, std::string_view channel) const {
  std::shared_lock lock(mu_);
  const SubscriberMap& channels = channels_[Index(kind)];
  auto it = channels.find(channel);
  return it == channels.end() ? 0 : static_cast<int64_t>(it->second.size());
}

int64_t PubSubRegistry::NumPat() const {
  std::shared_lock lock(mu_);
  return static_cast<int64_t>(patterns_.size());
}

PubSubRegistry::Counts PubSubRegistry::counts() const {
  std::shared_lock lock(mu_);
  return Counts{static_cast<int64_t>(channels_[0].size()), static_cast<int64_t>(patterns_.size()),
                static_cast<int64_t>(channels_[1].size())};
}

void AttachPubSub(ServerState& server) {
  server.attach_pubsub(std::make_shared<PubSubRegistry>(server));
}

PubSubRegistry& PubSubOf(ServerState& server) {
  // AttachPubSub attaches the only implementation.
  return static_cast<PubSubRegistry&>(*server.pubsub());
}

}  // namespace sluice::server
