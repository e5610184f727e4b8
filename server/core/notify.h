// Keyspace notifications (notify-keyspace-events): the event classes, their text form, and the
// per-thread queue of events a command fires (and of messages a script publishes). A command calls
// NotifyKeyspaceEvent as it writes (as Redis's notifyKeyspaceEvent); the dispatcher publishes the
// queued events through the PubSubHub once the top-level unit (the command, EXEC or script) has
// committed, in the order they fired, and drops them when the commit failed. With
// notify-keyspace-events "" (the default) a call costs one relaxed atomic load. Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sluice/store.h"

namespace sluice::server {

class PubSubHub;
class ServerState;

// Redis's NOTIFY_* bits.
enum NotifyClass : int {
  kNotifyKeyspace = 1 << 0,  // K
  kNotifyKeyevent = 1 << 1,  // E
  kNotifyGeneric = 1 << 2,   // g
  kNotifyString = 1 << 3,    // $
  kNotifyList = 1 << 4,      // l
  kNotifySet = 1 << 5,       // s
  kNotifyHash = 1 << 6,      // h
  kNotifyZset = 1 << 7,      // z
  kNotifyExpired = 1 << 8,   // x
  kNotifyEvicted = 1 << 9,   // e
  kNotifyStream = 1 << 10,   // t
  kNotifyKeyMiss = 1 << 11,  // m (not part of A)
  kNotifyModule = 1 << 13,   // d
  kNotifyNew = 1 << 14,      // n (not part of A)
  kNotifyAll = kNotifyGeneric | kNotifyString | kNotifyList | kNotifySet | kNotifyHash |
               kNotifyZset | kNotifyExpired | kNotifyEvicted | kNotifyStream | kNotifyModule,
};

// "KEA" -> flags; nullopt for a character that is no class (Redis's -1).
std::optional<int> ParseNotifyClasses(std::string_view text);
// flags -> Redis's canonical text ("AKE").
std::string FormatNotifyClasses(int flags);

// The live flags, set from the configuration (ServerState::PublishLocked).
void SetNotifyFlags(int flags);
inline std::atomic<int> g_notify_flags{0};
inline bool NotifyEnabled(int type) {
  return (g_notify_flags.load(std::memory_order_relaxed) & type) != 0;
}

// Queues the event `event` of class `type` on `key` in `db` for this thread's current command.
void QueueKeyspaceEvent(int type, std::string_view event, int db, std::string_view key);
inline void NotifyKeyspaceEvent(int type, std::string_view event, int db, std::string_view key) {
  if (NotifyEnabled(type)) QueueKeyspaceEvent(type, event, db, key);
}
// A message a script publishes (PUBLISH, SPUBLISH) is queued with the events and delivered in
// order with them by `deliver` (given the hub; nullptr: dropped) once the script's unit has
// committed: a script that stops and runs again (a key another thread holds) must not have
// published its first run's messages. The caller replies with the receivers counted when queued.
using DeliverFn = void (*)(PubSubHub* hub, std::string_view channel, std::string_view message);
void QueueDelivery(DeliverFn deliver, std::string_view channel, std::string_view message);
// Publishes this thread's queued events and messages through `hub` (nullptr: drops them), in
// order.
void PublishQueuedEvents(PubSubHub* hub);
// Drops this thread's queued events and messages (the commit failed, or the unit runs again).
void DropQueuedEvents();
// True when this thread has events queued (cheap).
bool HasQueuedEvents();
// Publishes one event at once (events that fire outside a command: the expiry cycle).
void PublishKeyspaceEvent(PubSubHub* hub, int type, std::string_view event, int db,
                          std::string_view key);

// The commit observer behind the "expired" events (class x): the Store tells it the keys whose
// expired values a unit removed (the expiry cycle's, or a read's), and it publishes at once.
// Register it with the Store before serving. Costs one relaxed load per removal when off.
class ExpiredEventsObserver : public CommitObserver {
 public:
  explicit ExpiredEventsObserver(ServerState& server) : server_(server) {}
  void OnCommit(std::span<const KeyRef>, uint32_t) override {}
  void OnExpired(std::span<const KeyRef> expired) override;

 private:
  ServerState& server_;
};

}  // namespace sluice::server
