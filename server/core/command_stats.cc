#include "server/core/command_stats.h"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>

namespace sluice::server {

namespace {

constexpr size_t kMaxErrorCodes = 128;  // Redis's ERROR_STATS_NUMBER

struct Counters {
  std::atomic<uint64_t> calls{0}, usec{0}, rejected{0}, failed{0};
};

// One thread's counts. Only its thread adds (load + store, no read-modify-write instruction);
// readers sum with relaxed loads.
struct Block {
  Counters commands[kMaxCommandStats];
  std::mutex errors_mu;  // uncontended but for INFO: errors are off the fast path
  std::map<std::string, uint64_t, std::less<>> errors;
};

void Add(std::atomic<uint64_t>& counter, uint64_t n) {
  counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

struct Registry {
  std::mutex mu;
  std::vector<std::unique_ptr<Block>> blocks;  // never shrinks: threads' blocks outlive them
};

Registry& TheRegistry() {
  static Registry* registry = new Registry;  // never destroyed: threads may count at exit
  return *registry;
}

Block& ThisThreadsBlock() {
  thread_local Block* block = [] {
    Registry& r = TheRegistry();
    std::lock_guard<std::mutex> l(r.mu);
    r.blocks.push_back(std::make_unique<Block>());
    return r.blocks.back().get();
  }();
  return *block;
}

}  // namespace

void RecordCommandCall(size_t command_id, int64_t usec, bool failed) {
  if (command_id >= kMaxCommandStats) return;
  Counters& c = ThisThreadsBlock().commands[command_id];
  Add(c.calls, 1);
  Add(c.usec, usec > 0 ? static_cast<uint64_t>(usec) : 0);
  if (failed) Add(c.failed, 1);
}

void RecordCommandRejected(size_t command_id) {
  if (command_id >= kMaxCommandStats) return;
  Add(ThisThreadsBlock().commands[command_id].rejected, 1);
}

void RecordErrorReply(std::string_view message) {
  const std::string_view code = message.substr(0, message.find(' '));
  Block& block = ThisThreadsBlock();
  std::lock_guard<std::mutex> l(block.errors_mu);
  auto it = block.errors.find(code);
  if (it != block.errors.end()) {
    ++it->second;
  } else if (block.errors.size() < kMaxErrorCodes) {
    block.errors.emplace(std::string(code), 1);
  }
}

std::vector<CommandTotals> SumCommandStats() {
  std::vector<CommandTotals> out(kMaxCommandStats);
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> l(r.mu);
  for (const auto& block : r.blocks) {
    for (size_t i = 0; i < kMaxCommandStats; ++i) {
      const Counters& c = block->commands[i];
      out[i].calls += c.calls.load(std::memory_order_relaxed);
      out[i].usec += c.usec.load(std::memory_order_relaxed);
      out[i].rejected += c.rejected.load(std::memory_order_relaxed);
      out[i].failed += c.failed.load(std::memory_order_relaxed);
    }
  }
  return out;
}

std::vector<std::pair<std::string, uint64_t>> SumErrorStats() {
  std::map<std::string, uint64_t> sum;
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> l(r.mu);
  for (const auto& block : r.blocks) {
    std::lock_guard<std::mutex> el(block->errors_mu);
    for (const auto& [code, n] : block->errors) {
      if (sum.count(code) > 0 || sum.size() < kMaxErrorCodes) sum[code] += n;
    }
  }
  return {sum.begin(), sum.end()};
}

void ResetCommandStats() {
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> l(r.mu);
  for (const auto& block : r.blocks) {
    for (Counters& c : block->commands) {
      c.calls.store(0, std::memory_order_relaxed);
      c.usec.store(0, std::memory_order_relaxed);
      c.rejected.store(0, std::memory_order_relaxed);
      c.failed.store(0, std::memory_order_relaxed);
    }
    std::lock_guard<std::mutex> el(block->errors_mu);
    block->errors.clear();
  }
}

}  // namespace sluice::server
