// The one command table: name, arity (Redis convention: positive = exact, negative = at least
// -arity, both counting the command name), flags, key positions, handler. Families register
// their commands by explicit calls (RegisterStringCommands(table), ...:
// server/commands/commands.h), never by static initialisers. The Dispatcher checks arity and
// authentication centrally, then calls the handler.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "protocol/reply_writer.h"
#include "server/core/acl_key_perms.h"
#include "sluice/store.h"

namespace sluice::server {

class BlockedCommand;
class ServerState;
struct ClientState;

using Args = std::span<const std::string_view>;  // args[0] is the command name

// Everything a handler may touch. Owned by the connection; valid for one call.
// The options of every unit of work the server runs: its durability is deferred, because the
// I/O round makes every batch it ran durable at once before any of their replies leaves
// (server/net/io_round.h: one write(2), and under appendfsync always one group fsync).
inline TransactionOptions UnitOptions(bool all_keys, bool isolate_reads) {
  return TransactionOptions{
      .all_keys = all_keys, .isolate_reads = isolate_reads, .defer_durability = true};
}

struct CommandContext {
  CommandContext(Store& store_in, ServerState& server_in, ClientState& client_in,
                 protocol::ReplyWriter& out_in)
      : store(store_in), server(server_in), client(client_in), out(out_in) {}
  CommandContext(const CommandContext&) = delete;
  CommandContext& operator=(const CommandContext&) = delete;

  Store& store;  // for the store's settings and statistics; data goes through txn()
  ServerState& server;
  ClientState& client;
  protocol::ReplyWriter& out;
  // The unit of work the command's data operations run in. The Dispatcher sets it before the
  // handler runs: the command's own unit (its keys locked as the command table says), or the
  // EXEC's or script's unit the command is part of. A command that is not a data command gets,
  // on its first txn() call, a unit that locks nothing.
  Store::Transaction* unit = nullptr;
  std::optional<Store::Transaction> own_unit;  // the command's own unit, when it has one
  // The I/O round's commit group: plain data commands join it (one RocksDB write for the round);
  // the Dispatcher flushes it before any other command. Null outside a connection's batch.
  CommitGroup* group = nullptr;
  // Lent by a connection that can park its client (server/core/blocking.h); nullptr inside EXEC and
  // scripts and in the in-process harness, where blocking commands answer as on a timeout.
  BlockedCommand* blocking = nullptr;
  // Set by the Dispatcher while a kScriptUnit command runs as a plain data command (its
  // CommandSpec::data_call said so; see DataCallCheck), with what that check found for the
  // handler in data_call_arg. A handler that finds it must leave its declared keys sets
  // needs_script_unit instead, having replied and staged nothing.
  bool data_call = false;
  int data_call_arg = 0;
  bool needs_script_unit = false;
  // Set for a command a script runs (redis.call): MONITOR shows it as "[db lua]".
  bool from_script = false;

  Store::Transaction& txn() {
    if (unit == nullptr) {
      unit = &own_unit.emplace(store, std::span<const KeyRef>{},
                               UnitOptions(/*all_keys=*/false, /*isolate_reads=*/false));
    }
    return *unit;
  }
};

using Handler = void (*)(CommandContext& ctx, Args args);

// For a kScriptUnit command (EVAL, EVALSHA): true when this call will touch nothing but the keys
// it declares (a recognised library script whose native op keeps to KEYS), so the Dispatcher
// runs it as a plain data command instead: its declared keys locked, its reads not isolated, a
// member of the round's commit group (one RocksDB write per I/O round). It may leave a
// value for the handler in ctx.data_call_arg. The handler must then keep to those keys: where
// it cannot (the native op declined, the body must run in Lua), it sets ctx.needs_script_unit,
// replies and stages nothing, and the Dispatcher runs it again in a script unit.
using DataCallCheck = bool (*)(CommandContext& ctx, Args args);

// For commands whose keys a (first, last, step) range cannot describe (LIMITS.TAKE, EVAL,
// ZUNIONSTORE, ...): appends the positions in `args` of every key argument. Must accept any
// args that passed the arity check (bad input: append nothing; the handler reports the error).
using KeyFinder = void (*)(Args args, std::vector<int>* positions);

// Flags, as COMMAND INFO names them.
enum CommandFlag : uint32_t {
  kWrite = 1u << 0,       // "write"
  kReadOnly = 1u << 1,    // "readonly"
  kDenyOom = 1u << 2,     // "denyoom"
  kAdmin = 1u << 3,       // "admin"
  kNoAuth = 1u << 4,      // "no_auth": allowed before AUTH
  kFast = 1u << 5,        // "fast"
  kLoading = 1u << 6,     // "loading"
  kStale = 1u << 7,       // "stale"
  kNoScript = 1u << 8,    // "noscript"
  kConnection = 1u << 9,  // group "connection" helper flag (not shown)
  kNoMulti = 1u << 10,    // "no_multi": refused inside MULTI
  // Not queued inside MULTI: runs at once (MULTI, EXEC, DISCARD, WATCH, QUIT, RESET). Not shown.
  kMultiControl = 1u << 11,
  // Runs in a unit that locks the keys it declares, even none, and isolates its reads (EVAL,
  // FCALL), a member of the round's commit group: a script's undeclared keys are taken when
  // free, else the whole script runs again alone, then holding every stripe. Not shown.
  kScriptUnit = 1u << 12,
  // "blocking": may park its client (server/core/blocking.h); ACL category @blocking.
  kBlocking = 1u << 13,
  kAllowBusy = 1u << 14,  // "allow_busy": answered while a script runs past busy-reply-threshold
  // Shown in COMMAND INFO as Redis 7.0 shows them; Sluice's behaviour does not depend on them
  // (no async loading, MONITOR and SLOWLOG decide by command, ASKING by cluster_route.cc).
  kNoAsyncLoading = 1u << 15,   // "no_async_loading"
  kSkipMonitor = 1u << 16,      // "skip_monitor"
  kSkipSlowlog = 1u << 17,      // "skip_slowlog"
  kNoMandatoryKeys = 1u << 18,  // "no_mandatory_keys"
  kAsking = 1u << 19,           // "asking"
  // "pubsub": a pub/sub command (SUBSCRIBE, PUBLISH, PUBSUB ...); ACL category @pubsub.
  kPubSub = 1u << 20,
  // Shown as "write" and admitted as a write (-READONLY on a read-only replica, min-replicas,
  // CLIENT PAUSE WRITE), but not a key write: it runs outside data units (FUNCTION LOAD, DELETE,
  // FLUSH, RESTORE change the function libraries, which reach replicas as the command itself).
  kWritesLibraries = 1u << 21,
  // The Dispatcher plans no unit for it and leaves the round's commit group as it is: MULTI and
  // DISCARD touch no data; EXEC joins the group or writes it first itself (cmd_multi.cc's
  // ExecGroup). Not shown.
  kKeepsGroup = 1u << 22,
  // Redis's MAY_REPLICATE (not shown, as in Redis 7.0): a command that is not a write but may
  // add to the replication stream (PUBLISH, SPUBLISH, PFCOUNT); a CLIENT PAUSE WRITE holds it.
  kMayReplicate = 1u << 23,
};

// A Redis 7 key specification, for COMMAND INFO (how cluster-aware clients find keys). The
// search begins at argument `index` (begin_keyword empty) or after the first `begin_keyword` at
// or after `index`; from there a range: last key `lastkey` (relative; -1: the last argument),
// `keystep`, `limit`. `flags` as Redis names them ("RW", "UPDATE", "INCOMPLETE", ...).
struct KeySpec {
  std::vector<std::string> flags;
  int index = 1;
  std::string begin_keyword;
  int lastkey = 0;
  int keystep = 1;
  int limit = 0;
};

struct CommandSpec {
  std::string name;  // lower case, e.g. "get", "gcra.take", "client|list" for subcommands
  int arity = 0;
  uint32_t flags = 0;
  int first_key = 0;  // 0 when the command takes no keys
  int last_key = 0;   // -1: the last argument
  int key_step = 0;
  Handler handler = nullptr;
  KeyFinder find_keys = nullptr;      // set for variable key positions; overrides the range above
  DataCallCheck data_call = nullptr;  // kScriptUnit commands only; see DataCallCheck
  std::vector<KeySpec> key_specs;     // COMMAND INFO's key specifications (may be empty)
  // For COMMAND DOCS and redis-cli hints.
  std::string group;  // "string", "generic", "server", "connection", "rate-limit", ...
  std::string summary;
  std::string since;           // "1.0.0"
  std::string arguments_hint;  // e.g. "key value [NX|XX] [GET] [EX seconds|PX milliseconds]"
  // Set by CommandTable::Add: the position in the table (indexes the ACL command bitmaps) and
  // the ACL categories (AclCategoriesOf, server/core/acl_categories.h) unless already set.
  size_t id = 0;
  uint32_t acl_categories = 0;
  AclKeyPerms acl_key_perms;  // AclKeyPermsOf (server/core/acl_key_perms.h)
};

// Key positions as Redis gives them: first, last (-1: the last argument), step. {} = no keys.
struct KeyRange {
  int first = 0;
  int last = 0;
  int step = 0;
};

// Builds a spec in one line; every family registers its commands through this.
CommandSpec MakeSpec(std::string group, std::string name, int arity, uint32_t flags, KeyRange keys,
                     Handler handler, std::string summary, std::string since, std::string hint);

class CommandTable {
 public:
  void Add(CommandSpec spec);
  // Case-insensitive; nullptr when unknown. Does not allocate.
  const CommandSpec* Find(std::string_view name) const;
  const std::vector<CommandSpec>& all() const { return specs_; }

 private:
  // Tells tables apart in Find's per-thread memo: unique for the process's life, a copy's too
  // (tables copied, then added to, differ).
  struct Id {
    Id() : value(next.fetch_add(1, std::memory_order_relaxed)) {}
    Id(const Id&) : Id() {}
    Id& operator=(const Id&) {
      value = next.fetch_add(1, std::memory_order_relaxed);
      return *this;
    }
    uint64_t value;
    static std::atomic<uint64_t> next;
  };
  Id id_;
  std::vector<CommandSpec> specs_;
  std::unordered_map<std::string, size_t> index_;  // lower-case name -> position
};

// Arity check: true when args.size() fits spec.arity.
bool ArityOk(const CommandSpec& spec, size_t argc);

// The positions in `args` of the command's key arguments (spec.find_keys, or the spec's
// first/last/step range clipped to args), appended to *positions in argument order.
void CommandKeyPositions(const CommandSpec& spec, Args args, std::vector<int>* positions);

}  // namespace sluice::server
