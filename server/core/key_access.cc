#include "server/core/key_access.h"

#include <time.h>

#include <algorithm>
#include <functional>

#include "server/core/command.h"

namespace sluice::server {

namespace {

constexpr size_t kSlots = size_t{1} << KeyAccessClock::kSlotBits;

int64_t MonotonicSeconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);  // a few ns: read on every command with keys
  return ts.tv_sec;
}

// Two distinct slot indexes from one 64-bit hash of (db, key), in the same 64-byte line of 16
// slots: one cache miss per key, while two keys of a line rarely share both slots.
std::pair<size_t, size_t> SlotsOf(int db, std::string_view key) {
  uint64_t h = std::hash<std::string_view>{}(key);
  h ^= static_cast<uint64_t>(db) * 0x9E3779B97F4A7C15ull;
  h *= 0xBF58476D1CE4E5B9ull;  // spreads the db into the high bits
  h ^= h >> 31;
  const size_t a = h & (kSlots - 1);
  const size_t b = (a & ~size_t{15}) | ((a + 1 + (h >> 40) % 15) & 15);
  return {a, b};
}

}  // namespace

KeyAccessClock::KeyAccessClock()
    : storage_(new std::atomic<uint32_t>[kSlots + 16]), start_s_(MonotonicSeconds()) {
  // A slot line starts on a 64-byte boundary (SlotsOf keeps a key's two slots in one line).
  auto at = reinterpret_cast<uintptr_t>(storage_.get());
  slots_ = storage_.get() + ((64 - at % 64) % 64) / sizeof(std::atomic<uint32_t>);
  for (size_t i = 0; i < kSlots; ++i) slots_[i].store(0, std::memory_order_relaxed);
}

uint32_t KeyAccessClock::Now() const {
  return static_cast<uint32_t>(MonotonicSeconds() - start_s_ + 1);
}

void KeyAccessClock::Touch(int db, std::string_view key) {
  const uint32_t now = Now();
  auto [a, b] = SlotsOf(db, key);
  // Most accesses fall in the second of the last one: skip the store (and the cache line's
  // ownership moving between threads).
  if (slots_[a].load(std::memory_order_relaxed) != now) {
    slots_[a].store(now, std::memory_order_relaxed);
  }
  if (slots_[b].load(std::memory_order_relaxed) != now) {
    slots_[b].store(now, std::memory_order_relaxed);
  }
}

void KeyAccessClock::Prefetch(int db, std::string_view key) const {
  __builtin_prefetch(&slots_[SlotsOf(db, key).first], /*rw=*/1, /*locality=*/3);
}

int64_t KeyAccessClock::IdleSeconds(int db, std::string_view key) const {
  const uint32_t now = Now();
  auto [a, b] = SlotsOf(db, key);
  const uint32_t last = std::min(slots_[a].load(std::memory_order_relaxed),
                                 slots_[b].load(std::memory_order_relaxed));
  if (last == 0) return now - 1;  // not touched since the start
  return last >= now ? 0 : now - last;
}

bool KeyAccessClock::Touches(const CommandSpec& spec) {
  const std::string& n = spec.name;
  if (n.empty() || (n[0] != 'e' && n[0] != 't' && n[0] != 'p' && n[0] != 'o')) return true;
  if (n.size() > 7 && n.compare(0, 7, "object|") == 0) return false;
  return n != "exists" && n != "type" && n != "ttl" && n != "pttl" && n != "expiretime" &&
         n != "pexpiretime";
}

KeyAccessClock& KeyAccess() {
  static KeyAccessClock* clock = new KeyAccessClock;  // never destroyed: threads exit late
  return *clock;
}

}  // namespace sluice::server
