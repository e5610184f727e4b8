// OBJECT IDLETIME's access clock: when each key was last read or written, kept in memory
// (Sluice's keys live in RocksDB; a write per read is out of the question). Approximate and
// bounded: a fixed table of 2^20 slots of 4 bytes (4 MiB) holding seconds since the server
// started; a key stamps the two slots its hash picks (in one cache line), and its last access
// is the older of the two (a collision can only make a key look more recently used, never less:
// IDLETIME never overstates). A key no command touched since the start reads as idle since the
// start (as Redis gives keys loaded at start their load time). Nothing survives a restart.
//
// The dispatcher stamps every key of every command that runs (a script's commands, EXEC's too)
// except those Redis looks up without touching them (LOOKUP_NOTOUCH): EXISTS, TYPE, TTL, PTTL,
// EXPIRETIME, PEXPIRETIME and OBJECT. Thread-safe, lock-free (relaxed atomics).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>

namespace sluice::server {

struct CommandSpec;

class KeyAccessClock {
 public:
  static constexpr size_t kSlotBits = 20;

  KeyAccessClock();
  // Marks the key as accessed now.
  void Touch(int db, std::string_view key);
  // Starts loading the key's slot line (a cache miss in a 4 MiB table) ahead of its Touch: the
  // connection calls it for the keys of the pipelined commands it looks ahead at.
  void Prefetch(int db, std::string_view key) const;
  // Whole seconds since the key was last accessed (at most the time since the start).
  int64_t IdleSeconds(int db, std::string_view key) const;
  // Whether commands of `spec` touch their keys (every one but Redis's LOOKUP_NOTOUCH ones).
  static bool Touches(const CommandSpec& spec);

 private:
  // Seconds since the start plus one (0: never stamped), from a coarse monotonic clock.
  uint32_t Now() const;

  std::unique_ptr<std::atomic<uint32_t>[]> storage_;  // kSlots and room to align them
  std::atomic<uint32_t>* slots_ = nullptr;            // into storage_, 64-byte aligned
  int64_t start_s_;
};

// The process's clock (created on first use).
KeyAccessClock& KeyAccess();

}  // namespace sluice::server
