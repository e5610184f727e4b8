// Test harness for server commands: runs commands through the real Dispatcher and command table
// against a real Store in a fresh temporary directory, and returns the exact reply bytes.
// Plus builders for expected replies. Not thread-safe; one Harness per test.
// harness.cc also defines doctest's main() for test_server: test files must not define it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "server/core/client_state.h"
#include "server/core/command.h"
#include "server/core/dispatcher.h"
#include "server/core/server_state.h"
#include "sluice/clock.h"
#include "sluice/store.h"

namespace sluice::server::testing {

// A Store in a fresh temp dir, a ServerState with defaults (debug command enabled, no password),
// one ClientState, and the full command table. The clock is an AdjustableClock set to manual
// time 1'700'000'000'000 ms. Destructor closes the store and removes the temp dir.
struct HarnessOptions {
  // The store's background expiry cycle. Tests that count what the test thread does turn it
  // off: the cycle's removals join that thread's RocksDB write groups (the leader appends every
  // follower's record), so what the thread allocates would depend on how fast it runs (TSan).
  bool active_expiry = true;
};

class Harness {
 public:
  Harness() : Harness(HarnessOptions{}) {}
  explicit Harness(HarnessOptions harness_options);
  ~Harness();
  Harness(const Harness&) = delete;
  Harness& operator=(const Harness&) = delete;

  std::string Run(std::vector<std::string> args);  // raw reply bytes of one command
  std::string Cmd(std::string_view line);          // splits `line` on single spaces, then Run
  // Runs `commands` as a connection runs one read batch (Connection::ProcessBatch): the plain
  // data commands as members of one CommitGroup, written by one flush at the end (earlier when
  // a command that runs alone flushes it). Returns each command's reply.
  std::vector<std::string> RunBatch(const std::vector<std::vector<std::string>>& commands);
  void Resp3();  // this client now speaks RESP3
  void AdvanceMs(int64_t ms);

  Store& store() { return *store_; }
  ServerState& server() { return *server_; }
  ClientState& client() { return client_; }
  AdjustableClock& clock() { return *clock_; }
  const std::string& dir() const { return dir_; }
  const CommandTable& table() const { return table_; }

 private:
  std::string dir_;
  std::shared_ptr<AdjustableClock> clock_;
  std::unique_ptr<ServerState> server_;
  std::unique_ptr<Store> store_;
  CommandTable table_;
  std::unique_ptr<Dispatcher> dispatcher_;
  ClientState client_;
};

// Makes a fresh empty directory under $TMPDIR (or /tmp); the caller removes it.
std::string MakeTempDir();

// Expected-reply builders.
std::string Ok();                                 // "+OK\r\n"
std::string Int(int64_t v);                       // ":5\r\n"
std::string Bulk(std::string_view s);             // "$1\r\nx\r\n"
std::string Nil();                                // "$-1\r\n"
std::string NilArray();                           // "*-1\r\n"
std::string Err(std::string_view msg);            // "-ERR x\r\n"
std::string Simple(std::string_view s);           // "+PONG\r\n"
std::string Arr(std::vector<std::string> items);  // "*2\r\n" + items
// RESP3
std::string Null();                                  // "_\r\n"
std::string Map(std::vector<std::string> kv_items);  // "%N\r\n" + items (N = items / 2)
std::string Double(double v);                        // ",1.5\r\n"
std::string Bool(bool v);                            // "#t\r\n"

// Redis error replies that many command tests expect.
std::string WrongTypeErr();                      // -WRONGTYPE Operation against ...
std::string NotIntegerErr();                     // -ERR value is not an integer or out of range
std::string NotFloatErr();                       // -ERR value is not a valid float
std::string SyntaxErr();                         // -ERR syntax error
std::string ArityErr(std::string_view command);  // -ERR wrong number of arguments for 'get' ...
std::string BadExpireErr(std::string_view cmd);  // -ERR invalid expire time in 'set' command

// Makes `key` hold something other than a string (a CONC limiter's state), through the Store.
void MakeNonString(Harness& h, std::string_view key);

// Counts a store's commits that wrote something. Register it with Store::AddCommitObserver; it
// must outlive the store (declare it before the Harness).
struct CommitCounter : CommitObserver {
  void OnCommit(std::span<const KeyRef>, uint32_t) override { ++commits; }
  std::atomic<int> commits{0};
};

// Another thread's unit that has written `key` = `value` in database 0 and holds the key's
// stripe from construction until 50 ms later: a unit on this thread that meets the key by
// try-lock (a script's undeclared key) conflicts, and one that waits for it gets it then.
class HeldKey {
 public:
  HeldKey(Store& store, std::string key, std::string value);
  ~HeldKey();  // joins both threads
  HeldKey(const HeldKey&) = delete;
  HeldKey& operator=(const HeldKey&) = delete;

 private:
  std::atomic<bool> held_{false};
  std::atomic<bool> release_{false};
  std::thread holder_;
  std::thread releaser_;
};

}  // namespace sluice::server::testing
