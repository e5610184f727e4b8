#include "server/core/loading_state.h"

#include <unistd.h>

#include <atomic>
#include <ctime>
#include <random>

namespace sluice::server {

namespace {

std::atomic<bool> g_loading{false};
std::atomic<int64_t> g_start_unix_s{0};
std::atomic<int64_t> g_total_bytes{0};
std::atomic<int64_t> g_loaded_bytes{0};

}  // namespace

void BeginLoading(int64_t total_bytes) {
  g_start_unix_s.store(static_cast<int64_t>(std::time(nullptr)), std::memory_order_relaxed);
  g_total_bytes.store(total_bytes, std::memory_order_relaxed);
  g_loaded_bytes.store(0, std::memory_order_relaxed);
  g_loading.store(true, std::memory_order_release);
}

void NoteLoadedBytes(int64_t loaded_bytes) {
  g_loaded_bytes.store(loaded_bytes, std::memory_order_relaxed);
}

void EndLoading() { g_loading.store(false, std::memory_order_release); }

bool Loading() { return g_loading.load(std::memory_order_relaxed); }

LoadingProgress GetLoadingProgress() {
  LoadingProgress p;
  p.loading = g_loading.load(std::memory_order_acquire);
  p.start_unix_s = g_start_unix_s.load(std::memory_order_relaxed);
  p.total_bytes = g_total_bytes.load(std::memory_order_relaxed);
  p.loaded_bytes = g_loaded_bytes.load(std::memory_order_relaxed);
  return p;
}

void KeyLoadDelay(int64_t us) {
  if (us == 0) return;
  if (us < 0) {
    thread_local std::minstd_rand rng(std::random_device{}());
    us = rng() % static_cast<uint64_t>(-us) == 0 ? 1 : 0;
  }
  if (us > 0) usleep(static_cast<useconds_t>(us));
}

}  // namespace sluice::server
