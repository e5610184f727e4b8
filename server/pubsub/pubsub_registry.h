// Room server/pubsub: who is subscribed to what, and the delivery of PUBLISH / SPUBLISH to the
// subscribers on every I/O thread. Sees only the server core.
//
// PubSubRegistry keeps Redis's three namespaces: channels (SUBSCRIBE), patterns (PSUBSCRIBE)
// and shard channels (SSUBSCRIBE). A publisher renders each message once and appends it to
// every receiver's ClientOutbox (server/core/client_outbox.h); the receiver's own thread writes
// it. So a publisher never waits for a subscriber's socket, and the messages of one publisher
// reach each subscriber in publish order. A subscriber whose pending bytes pass the pubsub
// class's hard client-output-buffer-limit has its outbox marked overflowed and is closed by its
// connection.
//
// Thread-safety: every method may be called from any thread. Subscriptions change under an
// exclusive lock; publishing holds it shared (publishers run in parallel). The subscription
// methods change `client`'s counts (ClientState::sub_channels...) and must run on the client's
// own thread (or before it is shared).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "server/core/client_state.h"
#include "server/core/pubsub_hub.h"

namespace sluice::server {

class ServerState;

// Channels (SUBSCRIBE/PUBLISH) or shard channels (SSUBSCRIBE/SPUBLISH).
enum class ChannelKind { kGlobal = 0, kShard = 1 };

class PubSubRegistry final : public PubSubHub {
 public:
  // `server` (for the pubsub output-buffer limit) must outlive the registry.
  explicit PubSubRegistry(const ServerState& server) : server_(server) {}

  // Each returns true when the subscription was added (or removed); false when it already
  // existed (or did not exist).
  bool Subscribe(ClientState& client, ChannelKind kind, std::string_view channel);
  bool Unsubscribe(ClientState& client, ChannelKind kind, std::string_view channel);
  bool SubscribePattern(ClientState& client, std::string_view pattern);
  bool UnsubscribePattern(ClientState& client, std::string_view pattern);

  // The client's channels of `kind` (in no set order, as Redis's dict) and patterns (in the
  // order subscribed, as Redis's list).
  std::vector<std::string> ChannelsOf(const ClientState& client, ChannelKind kind) const;
  std::vector<std::string> PatternsOf(const ClientState& client) const;

  void ForgetClient(ClientState& client) override;
  int64_t Publish(std::string_view channel, std::string_view message) override;
  // SPUBLISH: shard channel subscribers only (patterns never match shard channels).
  int64_t PublishShard(std::string_view channel, std::string_view message);
  // How many a Publish (kGlobal: the channel's subscribers and the matching patterns') or a
  // PublishShard (kShard) to `channel` would reach now, delivering nothing.
  int64_t Receivers(ChannelKind kind, std::string_view channel) const;
  // Cluster mode, Redis's removeChannelsInSlot: each shard channel for which `lost_slot` gives
  // a slot (>= 0; -1: kept) loses every subscriber, each sent a `sunsubscribe` push counting
  // the shard channels it has left (a client left with none leaves pub/sub mode). Channels go in
  // slot order, then byte order (Redis's slots_to_channels walk). Returns the channels dropped.
  // Any thread: the one exception to "the counts change on the client's own thread"; safe
  // because ForgetClient takes the lock while a drop is under way (dropping_) or the client
  // still counts a subscription, and a client left with none is dropped from clients_ here, in
  // the same critical section.
  size_t DropShardChannels(const std::function<int(std::string_view channel)>& lost_slot);

  // PUBSUB CHANNELS / SHARDCHANNELS: the channels with at least one subscriber matching
  // `pattern` (every one when none).
  std::vector<std::string> ActiveChannels(ChannelKind kind,
                                          std::optional<std::string_view> pattern) const;
  // PUBSUB NUMSUB / SHARDNUMSUB: the channel's subscribers (pattern subscribers not counted).
  int64_t NumSub(ChannelKind kind, std::string_view channel) const;
  // PUBSUB NUMPAT: the patterns with at least one subscriber.
  int64_t NumPat() const;
  // INFO stats: pubsub_channels, pubsub_patterns, pubsubshard_channels.
  struct Counts {
    int64_t channels = 0;
    int64_t patterns = 0;
    int64_t shard_channels = 0;
  };
  Counts counts() const;

 private:
  // Heterogeneous lookup: find by string_view without building a std::string.
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using Subscribers = std::vector<ClientState*>;  // in subscription order
  using SubscriberMap = std::unordered_map<std::string, Subscribers, Hash, std::equal_to<>>;
  using NameSet = std::unordered_set<std::string, Hash, std::equal_to<>>;
  struct ClientSubscriptions {
    NameSet channels[2];  // by ChannelKind
    std::vector<std::string> patterns;
  };

  // Appends `client` to name's subscribers / removes it (dropping an empty entry).
  static void AddSubscriber(SubscriberMap& map, std::string_view name, ClientState* client);
  static void RemoveSubscriber(SubscriberMap& map, std::string_view name, ClientState* client);
  // Sends one rendered frame (n elements, encoded `body`) to each of `subscribers`; returns
  // how many were sent it. Needs mu_ held (shared).
  int64_t Deliver(const Subscribers& subscribers, size_t n, std::string_view body) const;
  // Calls f(pattern, subscribers) for each set of subscribers a message on `channel` of `kind`
  // reaches: the channel's own (pattern null), then, for kGlobal, each matching pattern's (shard
  // channels have no patterns). Needs mu_ held (shared).
  template <typename F>
  void ForEachReceiverSet(ChannelKind kind, std::string_view channel, F&& f) const;
  void UpdateCounts(ClientState& client, const ClientSubscriptions& subs) const;

  const ServerState& server_;
  mutable std::shared_mutex mu_;
  SubscriberMap channels_[2];  // by ChannelKind
  SubscriberMap patterns_;
  std::unordered_map<const ClientState*, ClientSubscriptions> clients_;
  std::atomic<int> dropping_{0};  // DropShardChannels calls under way
};

// Gives `server` a fresh PubSubRegistry. Call once, before serving (main, test harnesses).
void AttachPubSub(ServerState& server);
// The registry AttachPubSub attached to `server`.
PubSubRegistry& PubSubOf(ServerState& server);

}  // namespace sluice::server
