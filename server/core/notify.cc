#include "server/core/notify.h"

#include <vector>

#include "server/core/pubsub_hub.h"
#include "server/core/server_state.h"

namespace sluice::server {

namespace {

// An event (`deliver` null), or a script's message: `event` its channel, `key` the message.
struct QueuedEvent {
  int type;
  int db;
  std::string event;
  std::string key;
  DeliverFn deliver = nullptr;
};

thread_local std::vector<QueuedEvent> t_queue;

constexpr struct {
  char c;
  int flag;
} kClassChars[] = {
    {'g', kNotifyGeneric}, {'$', kNotifyString}, {'l', kNotifyList},    {'s', kNotifySet},
    {'h', kNotifyHash},    {'z', kNotifyZset},   {'x', kNotifyExpired}, {'e', kNotifyEvicted},
    {'t', kNotifyStream},  {'d', kNotifyModule}, {'n', kNotifyNew},
};

}  // namespace

std::optional<int> ParseNotifyClasses(std::string_view text) {
  int flags = 0;
  for (char c : text) {
    switch (c) {
      case 'A':
        flags |= kNotifyAll;
        continue;
      case 'K':
        flags |= kNotifyKeyspace;
        continue;
      case 'E':
        flags |= kNotifyKeyevent;
        continue;
      case 'm':
        flags |= kNotifyKeyMiss;
        continue;
      default:
        break;
    }
    bool found = false;
    for (const auto& cc : kClassChars) {
      if (cc.c == c) {
        flags |= cc.flag;
        found = true;
      }
    }
    if (!found) return std::nullopt;
  }
  return flags;
}

std::string FormatNotifyClasses(int flags) {
  std::string out;
  if ((flags & kNotifyAll) == kNotifyAll) {
    out += 'A';
  } else {
    for (const auto& cc : kClassChars) {
      if (flags & cc.flag) out += cc.c;
    }
  }
  if (flags & kNotifyKeyspace) out += 'K';
  if (flags & kNotifyKeyevent) out += 'E';
  if (flags & kNotifyKeyMiss) out += 'm';
  return out;
}

void SetNotifyFlags(int flags) { g_notify_flags.store(flags, std::memory_order_relaxed); }

void QueueKeyspaceEvent(int type, std::string_view event, int db, std::string_view key) {
  t_queue.push_back(QueuedEvent{type, db, std::string(event), std::string(key)});
}

void QueueDelivery(DeliverFn deliver, std::string_view channel, std::string_view message) {
  t_queue.push_back(QueuedEvent{0, 0, std::string(channel), std::string(message), deliver});
}

void PublishKeyspaceEvent(PubSubHub* hub, int type, std::string_view event, int db,
                          std::string_view key) {
  const int flags = g_notify_flags.load(std::memory_order_relaxed);
  if (hub == nullptr || !(flags & type)) return;
  std::string channel;
  if (flags & kNotifyKeyspace) {
    channel = "__keyspace@" + std::to_string(db) + "__:";
    channel.append(key);
    hub->Publish(channel, event);
  }
  if (flags & kNotifyKeyevent) {
    channel = "__keyevent@" + std::to_string(db) + "__:";
    channel.append(event);
    hub->Publish(channel, key);
  }
}

void PublishQueuedEvents(PubSubHub* hub) {
  // Swap out first: publishing never queues, but keep the loop safe against it.
  std::vector<QueuedEvent> events;
  events.swap(t_queue);
  for (const QueuedEvent& e : events) {
    if (e.deliver != nullptr) {
      e.deliver(hub, e.event, e.key);
    } else {
      PublishKeyspaceEvent(hub, e.type, e.event, e.db, e.key);
    }
  }
  events.clear();
  if (t_queue.empty()) t_queue.swap(events);  // keep the capacity
}

void DropQueuedEvents() { t_queue.clear(); }

bool HasQueuedEvents() { return !t_queue.empty(); }

void ExpiredEventsObserver::OnExpired(std::span<const KeyRef> expired) {
  if (!NotifyEnabled(kNotifyExpired)) return;
  for (const KeyRef& k : expired) {
    PublishKeyspaceEvent(server_.pubsub(), kNotifyExpired, "expired", k.db, k.key);
  }
}

}  // namespace sluice::server
