// PerThreadBlocks<Block>: one Block per thread that counts, for counters written on the command
// path without a lock (commandstats, errorstats, latency histograms). A thread's block is made
// on its first Mine() and kept for the life of the process (threads may count while exiting,
// and INFO still sums what an ended thread counted).
// Thread-safety: Mine() from any thread (its first call takes the mutex, later ones are a TLS
// load); the owning thread writes its block's relaxed atomics; ForEach and Mutex() from any
// thread. Block must be a type of one file (the registry is one per Block type).
#pragma once

#include <memory>
#include <mutex>
#include <vector>

namespace sluice::server {

template <class Block>
class PerThreadBlocks {
 public:
  static Block& Mine() {
    thread_local Block* block = Add();
    return *block;
  }
  // Calls fn(Block&) for every thread's block, holding Mutex().
  template <class Fn>
  static void ForEach(Fn&& fn) {
    Registry& r = TheRegistry();
    std::lock_guard<std::mutex> l(r.mu);
    for (const auto& block : r.blocks) fn(*block);
  }
  // The registry's mutex, for state the caller keeps beside the blocks.
  static std::mutex& Mutex() { return TheRegistry().mu; }

 private:
  struct Registry {
    std::mutex mu;
    std::vector<std::unique_ptr<Block>> blocks;  // never shrinks
  };
  static Registry& TheRegistry() {
    static Registry* registry = new Registry;  // never destroyed: threads may count at exit
    return *registry;
  }
  static Block* Add() {
    Registry& r = TheRegistry();
    std::lock_guard<std::mutex> l(r.mu);
    r.blocks.push_back(std::make_unique<Block>());
    return r.blocks.back().get();
  }
};

}  // namespace sluice::server
