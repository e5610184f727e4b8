// Blocking commands (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP, BZPOPMIN, BZPOPMAX, BZMPOP):
// a client whose command finds every key empty parks until a commit writes one of them, its
// timeout passes, or CLIENT UNBLOCK releases it.
//
// The contract:
// - A parked client holds NO key locks. Its connection runs nothing else (later pipelined
//   commands wait behind it, as in Redis) but keeps reading, so a disconnect is noticed; its I/O
//   thread keeps serving other connections.
// - Wake on commit, in Redis's order: the BlockingRegistry is a Store::CommitObserver. A commit
//   that writes a key someone waits on wakes the first waiter of that key (FIFO per key: the
//   order clients blocked) *for that key*: as in Redis, the woken waiter is served only from
//   the key that woke it (BlockCandidates), on its own thread as a fresh unit of work. If that
//   key is empty again (someone else was faster, or it holds another type) it parks again
//   keeping its place, and the key's chain ends. A waiter that leaves after a wake for key K
//   (served, timed out, unblocked, disconnected) passes the wake on to the next waiter of K, so
//   one key's waiters are served one after another, as Redis serves them in one go. A key
//   whose first waiter is busy (woken for another key) waits, in commit order, until that
//   waiter is served or parks again: so when one EXEC fills two keys that the same clients
//   wait on, the first key's waiters are served before the second's, as in Redis ("BLMPOP with
//   multiple blocked clients"). A push inside MULTI/EXEC or a script wakes at its commit.
// - No lost wake-ups: a command parks (BlockingRegistry::Park) while its unit still holds its
//   keys' locks, and commits tell the registry while they hold theirs; so a push either commits
//   before the command looks (it then finds the element) or tells the registry after the client
//   is parked.
// - The woken command is a normal unit: its reply waits for the connection's durability ticket
//   (appendfsync) like any other write.
//
// How a command registers as blocking (cmd_lists.cc and cmd_zsets.cc follow it):
// 1. Register it as usual with its keys in the command table (so its unit locks them) and the
//    flags Redis gives it (write, noscript, kBlocking: COMMAND INFO shows "blocking" and
//    @blocking). Nothing else is declared: the handler parks (below).
// 2. In the handler, parse the timeout with ParseBlockTimeout and run the
//    non-blocking form. When every key is empty, call
//        if (BlockClient(ctx, keys, timeout)) return;   // parked: reply nothing now
//        <reply what Redis replies where it may not block: a null array, or a null bulk for
//         BLMOVE/BRPOPLPUSH>
//    BlockClient returns false where the client must not block (inside MULTI/EXEC, the
//    in-process test harness). A client that times out (or CLIENT UNBLOCK TIMEOUT) gets a null
//    array from the connection, whatever the command, as from Redis; CLIENT UNBLOCK ERROR gets
//    -UNBLOCKED. Parse the timeout where Redis does (BLPOP: first; BLMPOP: after the other
//    arguments), so bad input gets Redis's error.
// 3. When the command runs again after a wake, BlockRetrying(ctx) is true: Redis serves a
//    woken client only from keys of the right type, so the handler skips keys of another type
//    (KeysOfKind, BlockCandidates) instead of replying WRONGTYPE, and parks again when nothing
//    is left.
// The handler never sees the parking itself; the connection (BlockedCommand) keeps the
// command's arguments, its timer and its place, and runs it again through the Dispatcher.
//
// Thread-safety: BlockingRegistry is thread-safe. BlockedCommand (server/core/blocked_command.h)
// belongs to one connection and is used on its thread only.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "server/core/command.h"
#include "sluice/store.h"

namespace sluice::server {

class BlockedCommand;  // server/core/blocked_command.h

// What ends a client's wait, besides being served.
enum class BlockEvent {
  kRetry,    // a key it waits on was written: run the command again
  kTimeout,  // its timeout passed, or CLIENT UNBLOCK id TIMEOUT: answer as on a timeout
  kError,    // CLIENT UNBLOCK id ERROR: answer -UNBLOCKED
};

class BlockingRegistry : public CommitObserver {
 public:
  // Called with the registry's lock held, from any thread: must only post work to the client's
  // own thread.
  using WakeFn = std::function<void(BlockEvent)>;

  // Parks `client` on (db, keys...) at the back of each key's queue; a client already here
  // (parking again after a wake) keeps its places and is parked again. Call while holding the
  // keys' locks (from the command's unit), after finding them empty.
  void Park(ClientState* client, int db, std::span<const std::string_view> keys, WakeFn wake);
  // Forgets `client` (served, timed out, disconnected); passes on a wake it had not used. No-op
  // when it is not registered.
  void Remove(ClientState* client);
  // CLIENT UNBLOCK: when the client with this id is registered, removes it, sends it `how`
  // (kTimeout or kError) and returns true.
  bool Unblock(uint64_t client_id, BlockEvent how);
  // Clients waiting now (INFO clients blocked_clients).
  int64_t blocked_clients() const { return count_.load(std::memory_order_relaxed); }
  // The key `client` was last woken for (empty when none): the one key a retry may pop from.
  std::string WokenKey(const ClientState* client);

  void OnCommit(std::span<const KeyRef> written, uint32_t flushed_dbs) override;

 private:
  struct Waiter;
  using Queue = std::list<Waiter*>;
  struct Place {
    std::string slot;  // db byte + key
    Queue::iterator it;
  };
  struct Waiter {
    ClientState* client = nullptr;
    WakeFn wake;
    bool woken = false;     // told to run again and not parked since
    std::string woken_for;  // the slot it was woken for, while `woken`
    std::vector<Place> places;
  };

  // Serves `slot`'s waiters in order: nothing while one of them runs for it; else wakes the
  // first one for it, or, when that one is busy for another key, keeps `slot` in pending_
  // until it is done. mu_ held.
  void Kick(const std::string& slot);
  // Kicks the pending slots again, in the order they came (a waiter just finished). mu_ held.
  void KickPending();
  void RemoveLocked(uint64_t id);

  std::atomic<int64_t> count_{0};  // waiters, for the commit fast path and INFO
  std::mutex mu_;
  std::unordered_map<std::string, Queue> by_key_;
  std::unordered_map<uint64_t, std::unique_ptr<Waiter>> by_client_;  // by client id
  std::vector<std::string> pending_;  // written slots waiting for a busy first waiter
};

// A blocking command's timeout: 0 waits for ever, else milliseconds from when it first parks.
struct BlockTimeout {
  int64_t ms = 0;
};
// Redis's seconds timeout ("0.5", "1e-3", "0x10"...), rounded up to ms: kInvalidArgument
// "timeout is not a float or out of range" / "timeout is negative" as Redis 7.0.
Result<BlockTimeout> ParseBlockTimeout(std::string_view arg);

// The handler side (see the contract above). BlockClient parks the client when it may block
// here; false: answer as on a timeout.
bool BlockClient(CommandContext& ctx, std::span<const std::string_view> keys, BlockTimeout timeout);
// Before BlockClient: the parked copy of the command's arguments gets `value` at `index`.
void BlockRewriteArg(CommandContext& ctx, size_t index, std::string value);
// True while the command runs again after a wake (skip keys of another type).
bool BlockRetrying(const CommandContext& ctx);
// While retrying: the key the client was woken for (empty when unknown).
std::string_view BlockWokenKey(const CommandContext& ctx);
// The keys among `keys` that are missing or hold `kind` (a woken command's candidates).
Result<std::vector<std::string_view>> KeysOfKind(CommandContext& ctx,
                                                 std::span<const std::string_view> keys,
                                                 ValueKind kind);
// The argument layout LMPOP/ZMPOP and BLMPOP/BZMPOP share: [timeout] numkeys key [key ...] END
// [COUNT count], with numkeys at `first`. Checks it in Redis's order (numkeys, the END word with
// `valid_end`, COUNT, then a blocking form's timeout in args[1]); false after replying the error.
struct MPopArgs {
  std::span<const std::string_view> keys;
  std::string_view end;  // the END word, valid_end() true
  int64_t count = 1;
  BlockTimeout timeout;
};
bool ParseMPopArgs(CommandContext& ctx, std::span<const std::string_view> args, size_t first,
                   bool blocking, bool (*valid_end)(std::string_view), MPopArgs* out);

// The keys a blocking command may pop from now: all of them on its first run; after a wake
// only the key it was woken for, when that key is missing or holds `kind` (Redis serves a
// woken client from the key that became ready, and only from a key of its type). False after
// replying an error.
bool BlockCandidates(CommandContext& ctx, std::span<const std::string_view> keys, ValueKind kind,
                     std::vector<std::string_view>* out);

}  // namespace sluice::server
