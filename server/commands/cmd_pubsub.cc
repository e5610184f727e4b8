// Pub/sub commands: SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, SSUBSCRIBE, SUNSUBSCRIBE,
// PUBLISH, SPUBLISH and PUBSUB's subcommands, with Redis 7.0.15's replies. The registry and the
// delivery are in server/pubsub; a subscription's confirmation is a push frame (RESP3 >3,
// RESP2 *3), and RESP2's subscribed mode is enforced by the gate (server/core/dispatcher.cc).
#include "server/commands/cmd_pubsub.h"

#include <string>
#include <utility>
#include <vector>

#include "server/cluster/cluster.h"
#include "server/commands/commands.h"
#include "server/core/errors.h"
#include "server/core/notify.h"
#include "server/core/server_state.h"
#include "server/pubsub/pubsub_registry.h"

namespace sluice::server {

namespace {

// The count Redis reports after (un)subscribing: channels + patterns, or shard channels.
int64_t SubscriptionCount(const ClientState& client, bool shard) {
  if (shard) return client.sub_shard.load(std::memory_order_relaxed);
  return client.sub_channels.load(std::memory_order_relaxed) +
         client.sub_patterns.load(std::memory_order_relaxed);
}

// One confirmation frame: [kind, name (null when none), count].
void ReplySubscription(CommandContext& ctx, const char* kind, const std::string_view* name,
                       bool shard) {
  ctx.out.Push(3);
  ctx.out.Bulk(kind);
  if (name != nullptr) {
    ctx.out.Bulk(*name);
  } else {
    ctx.out.NullBulk();
  }
  ctx.out.Integer(SubscriptionCount(ctx.client, shard));
}

// What one family of subscription commands works on: channels, shard channels or patterns.
struct Family {
  const char* subscribe;    // confirmation kind, e.g. "subscribe"
  const char* unsubscribe;  // e.g. "unsubscribe"
  bool shard = false;
  bool patterns = false;
  ChannelKind kind = ChannelKind::kGlobal;
};
constexpr Family kChannels{"subscribe", "unsubscribe"};
constexpr Family kShardChannels{"ssubscribe", "sunsubscribe", true, false, ChannelKind::kShard};
constexpr Family kPatterns{"psubscribe", "punsubscribe", false, true};

bool Add(PubSubRegistry& registry, CommandContext& ctx, const Family& f, std::string_view name) {
  return f.patterns ? registry.SubscribePattern(ctx.client, name)
                    : registry.Subscribe(ctx.client, f.kind, name);
}

bool Remove(PubSubRegistry& registry, CommandContext& ctx, const Family& f, std::string_view name) {
  return f.patterns ? registry.UnsubscribePattern(ctx.client, name)
                    : registry.Unsubscribe(ctx.client, f.kind, name);
}

void SubscribeAll(CommandContext& ctx, Args args, const Family& f) {
  PubSubRegistry& registry = PubSubOf(ctx.server);
  // Messages are rendered for the protocol the client speaks when they are published.
  ctx.client.outbox.set_resp(ctx.client.resp);
  for (size_t i = 1; i < args.size(); ++i) {
    Add(registry, ctx, f, args[i]);
    ReplySubscription(ctx, f.subscribe, &args[i], f.shard);
  }
}

void UnsubscribeAll(CommandContext& ctx, Args args, const Family& f) {
  PubSubRegistry& registry = PubSubOf(ctx.server);
  if (args.size() > 1) {
    for (size_t i = 1; i < args.size(); ++i) {
      Remove(registry, ctx, f, args[i]);
      ReplySubscription(ctx, f.unsubscribe, &args[i], f.shard);
    }
    return;
  }
  // No names: every subscription of the family, or one frame with a null name when none.
  const std::vector<std::string> names =
      f.patterns ? registry.PatternsOf(ctx.client) : registry.ChannelsOf(ctx.client, f.kind);
  for (const std::string& name : names) {
    Remove(registry, ctx, f, name);
    const std::string_view view = name;
    ReplySubscription(ctx, f.unsubscribe, &view, f.shard);
  }
  if (names.empty()) ReplySubscription(ctx, f.unsubscribe, nullptr, f.shard);
}

void Subscribe(CommandContext& ctx, Args args) { SubscribeAll(ctx, args, kChannels); }
void Psubscribe(CommandContext& ctx, Args args) { SubscribeAll(ctx, args, kPatterns); }

// SSUBSCRIBE inside EXEC is refused (Redis's DENY BLOCKING client; SUBSCRIBE and PSUBSCRIBE
// are let through there for backward compatibility). ctx.unit is set only by EXEC here: the
// command is not allowed in scripts.
void Ssubscribe(CommandContext& ctx, Args args) {
  if (ctx.unit != nullptr) return ReplyError(ctx.out, SubscribeDenyBlocking("SSUBSCRIBE"));
  SubscribeAll(ctx, args, kShardChannels);
}

void Unsubscribe(CommandContext& ctx, Args args) { UnsubscribeAll(ctx, args, kChannels); }
void Punsubscribe(CommandContext& ctx, Args args) { UnsubscribeAll(ctx, args, kPatterns); }
void Sunsubscribe(CommandContext& ctx, Args args) { UnsubscribeAll(ctx, args, kShardChannels); }

// A client subscribed to the channel it publishes to (RESP3) gets its message before the
// reply, as from Redis, which appends it to the client's buffer at once. Only at the top level:
// inside EXEC or a script (ctx.unit set) the reply goes to the transaction or the script.
void ReplyReceivers(CommandContext& ctx, int64_t receivers) {
  if (ctx.unit == nullptr && ctx.client.outbox.queued_bytes() > 0) {
    ctx.client.outbox.TakeInto(ctx.out.buffer());
  }
  ctx.out.Integer(receivers);
}

// Delivers a message, here and, in cluster mode, over the cluster bus (server/cluster);
// returns this node's receivers, as Redis counts them.
template <bool kShard>
int64_t Deliver(PubSubRegistry& registry, std::string_view channel, std::string_view message) {
  const int64_t receivers =
      kShard ? registry.PublishShard(channel, message) : registry.Publish(channel, message);
  if (cluster::Cluster* c = cluster::Instance()) c->PropagatePublish(channel, message, kShard);
  return receivers;
}

// A script's message, once its unit committed (notify.h, QueueDelivery).
template <bool kShard>
void DeliverQueued(PubSubHub* hub, std::string_view channel, std::string_view message) {
  if (hub != nullptr) Deliver<kShard>(static_cast<PubSubRegistry&>(*hub), channel, message);
}

// From a script the message waits for the script's commit; the reply counts the receivers now.
template <bool kShard>
void PublishCommand(CommandContext& ctx, Args args) {
  PubSubRegistry& registry = PubSubOf(ctx.server);
  if (ctx.from_script) {
    QueueDelivery(&DeliverQueued<kShard>, args[1], args[2]);
    ctx.out.Integer(
        registry.Receivers(kShard ? ChannelKind::kShard : ChannelKind::kGlobal, args[1]));
    return;
  }
  ReplyReceivers(ctx, Deliver<kShard>(registry, args[1], args[2]));
}

void Publish(CommandContext& ctx, Args args) { PublishCommand<false>(ctx, args); }
void Spublish(CommandContext& ctx, Args args) { PublishCommand<true>(ctx, args); }

// PUBSUB CHANNELS|SHARDCHANNELS [pattern]
void ListChannels(CommandContext& ctx, Args args, ChannelKind kind) {
  if (args.size() > 3) return ReplyError(ctx.out, SubcommandSyntax(args[0], args[1]));
  std::optional<std::string_view> pattern;
  if (args.size() == 3) pattern = args[2];
  const std::vector<std::string> names = PubSubOf(ctx.server).ActiveChannels(kind, pattern);
  ctx.out.Array(names.size());
  for (const std::string& name : names) ctx.out.Bulk(name);
}

// PUBSUB NUMSUB|SHARDNUMSUB [channel ...]: a flat array of channel, count (even in RESP3).
void CountSubscribers(CommandContext& ctx, Args args, ChannelKind kind) {
  PubSubRegistry& registry = PubSubOf(ctx.server);
  ctx.out.Array((args.size() - 2) * 2);
  for (size_t i = 2; i < args.size(); ++i) {
    ctx.out.Bulk(args[i]);
    ctx.out.Integer(registry.NumSub(kind, args[i]));
  }
}

void PubsubChannels(CommandContext& ctx, Args args) {
  ListChannels(ctx, args, ChannelKind::kGlobal);
}
void PubsubShardChannels(CommandContext& ctx, Args args) {
  ListChannels(ctx, args, ChannelKind::kShard);
}
void PubsubNumSub(CommandContext& ctx, Args args) {
  CountSubscribers(ctx, args, ChannelKind::kGlobal);
}
void PubsubShardNumSub(CommandContext& ctx, Args args) {
  CountSubscribers(ctx, args, ChannelKind::kShard);
}
void PubsubNumPat(CommandContext& ctx, Args) { ctx.out.Integer(PubSubOf(ctx.server).NumPat()); }

void PubsubHelp(CommandContext& ctx, Args) {
  static constexpr const char* kLines[] = {
      "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CHANNELS [<pattern>]",
      "    Return the currently active channels matching a <pattern> (default: '*').",
      "NUMPAT",
      "    Return number of subscriptions to patterns.",
      "NUMSUB [<channel> ...]",
      "    Return the number of subscribers for the specified channels, excluding",
      "    pattern subscriptions(default: no channels).",
      "SHARDCHANNELS [<pattern>]",
      "    Return the currently active shard level channels matching a <pattern> (default: '*').",
      "SHARDNUMSUB [<shardchannel> ...]",
      "    Return the number of subscribers for the specified shard level channel(s)",
      "HELP",
      "    Prints this help.",
  };
  ctx.out.Array(std::size(kLines));
  for (const char* line : kLines) ctx.out.Simple(line);
}

CommandSpec Spec(const char* name, int arity, uint32_t flags, Handler handler, const char* summary,
                 const char* since, const char* hint) {
  return MakeSpec("pubsub", name, arity, flags, {}, handler, summary, since, hint);
}

}  // namespace

void ForgetSubscriptions(CommandContext& ctx) {
  if (ctx.server.pubsub() != nullptr) ctx.server.pubsub()->ForgetClient(ctx.client);
}

void RegisterPubSubCommands(CommandTable& table) {
  constexpr uint32_t kSub = kPubSub | kNoScript | kLoading | kStale;
  constexpr uint32_t kPub = kPubSub | kLoading | kStale | kFast | kMayReplicate;
  constexpr uint32_t kInfo = kPubSub | kLoading | kStale;
  table.Add(Spec("subscribe", -2, kSub, Subscribe,
                 "Listen for messages published to the given channels", "2.0.0",
                 "channel [channel ...]"));
  table.Add(Spec("unsubscribe", -1, kSub, Unsubscribe,
                 "Stop listening for messages posted to the given channels", "2.0.0",
                 "[channel [channel ...]]"));
  table.Add(Spec("psubscribe", -2, kSub, Psubscribe,
                 "Listen for messages published to channels matching the given patterns", "2.0.0",
                 "pattern [pattern ...]"));
  table.Add(Spec("punsubscribe", -1, kSub, Punsubscribe,
                 "Stop listening for messages posted to channels matching the given patterns",
                 "2.0.0", "[pattern [pattern ...]]"));
  // The shard channels are keys to cluster clients (COMMAND INFO shows them as Redis 7.0 does:
  // a "not_key" key spec and the range it implies); nothing else treats them as keys.
  auto shard = [](CommandSpec spec, int lastkey) {
    KeySpec key_spec{};
    key_spec.flags = {"not_key"};
    key_spec.index = 1;
    key_spec.lastkey = lastkey;
    spec.key_specs.push_back(std::move(key_spec));
    return spec;
  };
  table.Add(shard(Spec("ssubscribe", -2, kSub, Ssubscribe,
                       "Listen for messages published to the given shard channels", "7.0.0",
                       "shardchannel [shardchannel ...]"),
                  -1));
  table.Add(shard(Spec("sunsubscribe", -1, kSub, Sunsubscribe,
                       "Stop listening for messages posted to the given shard channels", "7.0.0",
                       "[shardchannel [shardchannel ...]]"),
                  -1));
  table.Add(
      Spec("publish", 3, kPub, Publish, "Post a message to a channel", "2.0.0", "channel message"));
  table.Add(shard(Spec("spublish", 3, kPub, Spublish, "Post a message to a shard channel", "7.0.0",
                       "shardchannel message"),
                  0));
  table.Add(
      Spec("pubsub", -2, 0, nullptr, "A container for Pub/Sub commands", "2.8.0", "subcommand"));
  table.Add(Spec("pubsub|channels", -2, kInfo, PubsubChannels, "List active channels", "2.8.0",
                 "[pattern]"));
  table.Add(Spec("pubsub|numsub", -2, kInfo, PubsubNumSub,
                 "Get the count of subscribers for channels", "2.8.0", "[channel [channel ...]]"));
  table.Add(Spec("pubsub|numpat", 2, kInfo, PubsubNumPat,
                 "Get the count of unique patterns pattern subscriptions", "2.8.0", ""));
  table.Add(Spec("pubsub|shardchannels", -2, kInfo, PubsubShardChannels,
                 "List active shard channels", "7.0.0", "[pattern]"));
  table.Add(Spec("pubsub|shardnumsub", -2, kInfo, PubsubShardNumSub,
                 "Get the count of subscribers for shard channels", "7.0.0",
                 "[shardchannel [shardchannel ...]]"));
  table.Add(Spec("pubsub|help", 2, kLoading | kStale, PubsubHelp,
                 "Show helpful text about the different subcommands", "6.2.0", ""));
}

}  // namespace sluice::server
