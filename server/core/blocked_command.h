// BlockedCommand: a connection's parked blocking command (server/core/blocking.h has the contract):
// its arguments, its timer, the event that will resume it, and its generation (so an event for
// an earlier parked command is ignored). Used on the connection's thread only; its Notify is
// called from any thread.
#pragma once

#include <asio.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "server/core/blocking.h"
#include "server/core/command.h"

namespace sluice::server {

class Dispatcher;

// A connection's parked command: its arguments, its timer, the event that will resume it. Used
// on the connection's thread; the Connection lends it to each command through
// CommandContext::blocking.
class BlockedCommand {
 public:
  // Posts (gen, event) to the connection's thread, where it must call Note(gen, event). Called
  // from any thread (the registry's wake, the timer).
  using Notify = std::function<void(uint64_t gen, BlockEvent event)>;

  BlockedCommand(asio::any_io_executor executor, BlockingRegistry& registry, ClientState& client);
  ~BlockedCommand();
  BlockedCommand(const BlockedCommand&) = delete;
  BlockedCommand& operator=(const BlockedCommand&) = delete;
  void set_notify(Notify notify) { notify_ = std::move(notify); }

  // Called by BlockClient (the handler, under its keys' locks).
  bool Park(int db, std::span<const std::string_view> keys, BlockTimeout timeout);
  bool retrying() const { return retrying_; }
  // While retrying: the key the registry woke it for (empty when unknown).
  std::string_view woken_key() const { return woken_key_; }
  // Called before Park: the kept copy of the arguments gets `value` at `index` (XREAD's "$"
  // becomes the ID it stood for when the client first blocked, so a retry reads after it).
  void RewriteArg(size_t index, std::string value) {
    rewrites_.emplace_back(index, std::move(value));
  }

  // After a top-level command ran: true when it parked the client (no reply was written:
  // `replied` false); keeps a copy of its arguments and arms its timer. A command that parked
  // and then replied anyway (its unit failed to commit) is forgotten.
  bool TakePark(Args args, const Dispatcher& dispatcher, bool replied);
  bool parked() const { return parked_; }
  // The command that just ran asked to park (it parks unless it replied anyway).
  bool park_requested() const { return requested_; }
  // Records an event for the parked command of generation `gen`; false when stale.
  bool Note(uint64_t gen, BlockEvent event);
  bool has_event() const { return event_.has_value(); }
  // Handles the recorded event into ctx.out: a retry runs the command again; a timeout replies
  // a null array (Redis's reply to every timed-out blocking command); kError -UNBLOCKED. True
  // when the client is no longer parked (its one reply is written); false when it parked again.
  bool Resume(CommandContext& ctx, const Dispatcher& dispatcher);
  // Disconnect: leaves the registry and stops the timer.
  void Forget();

 private:
  void Unpark();
  // SLOWLOG/LATENCY for the parked command, answered now after running since `start_ticks`.
  void RecordServed(CommandContext& ctx, uint64_t start_ticks) const;

  BlockingRegistry& registry_;
  ClientState& client_;
  asio::steady_timer timer_;
  Notify notify_;
  uint64_t gen_ = 0;                 // the parked command's generation (stale events differ)
  bool parked_ = false;              // a command waits
  bool requested_ = false;           // the command that just ran asked to park
  bool retrying_ = false;            // the parked command runs again after a wake
  std::string woken_key_;            // the key it was woken for, while retrying_
  int64_t timeout_ms_ = 0;           // of the command that just asked to park
  std::optional<BlockEvent> event_;  // what will resume the parked command
  const CommandSpec* spec_ = nullptr;
  std::vector<std::string> args_;       // the parked command's arguments
  std::vector<std::string> sent_args_;  // as the client sent them, when a RewriteArg changed them
  std::vector<std::pair<size_t, std::string>> rewrites_;  // RewriteArg's, for TakePark
};

}  // namespace sluice::server
