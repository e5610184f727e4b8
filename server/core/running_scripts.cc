#include "server/core/running_scripts.h"

#include <algorithm>
#include <chrono>

namespace sluice::server {

void RunningScripts::Add(RunningScript* script) {
  // No serving pass runs while on_busy does: it may answer connections of this thread.
  std::lock_guard<std::mutex> serving(serving_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    running_.push_back(script);
    count_.fetch_add(1, std::memory_order_release);
  }
  if (on_busy_) on_busy_();
}

void RunningScripts::Remove(RunningScript* script) {
  std::lock_guard<std::mutex> serving(serving_mu_);
  std::lock_guard<std::mutex> lock(mu_);
  running_.erase(std::remove(running_.begin(), running_.end(), script), running_.end());
  count_.fetch_sub(1, std::memory_order_release);
}

RunningScripts::BusyKind RunningScripts::Busy(int64_t now_ms, int64_t threshold_ms) const {
  if (count_.load(std::memory_order_acquire) == 0) return BusyKind::kNone;  // lock-free
  std::lock_guard<std::mutex> lock(mu_);
  for (const RunningScript* s : running_) {
    if (now_ms - s->started_ms >= threshold_ms) {
      return s->is_function ? BusyKind::kFunction : BusyKind::kScript;
    }
  }
  return BusyKind::kNone;
}

bool RunningScripts::BusyOn(std::thread::id thread) const {
  if (count_.load(std::memory_order_acquire) == 0) return false;
  std::lock_guard<std::mutex> lock(mu_);
  return std::any_of(running_.begin(), running_.end(),
                     [&](const RunningScript* s) { return s->thread == thread; });
}

std::optional<RunningScriptView> RunningScripts::Longest(int64_t now_ms) const {
  if (count_.load(std::memory_order_acquire) == 0) return std::nullopt;
  std::lock_guard<std::mutex> lock(mu_);
  const RunningScript* first = nullptr;
  for (const RunningScript* s : running_) {
    if (first == nullptr || s->started_ms < first->started_ms) first = s;
  }
  if (first == nullptr) return std::nullopt;
  return RunningScriptView{first->name, first->command, now_ms - first->started_ms};
}

RunningScripts::KillResult RunningScripts::Kill(bool functions, int64_t now_ms,
                                                int64_t threshold_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<RunningScript*> busy;
  for (RunningScript* s : running_) {
    if (s->is_function == functions && now_ms - s->started_ms >= threshold_ms) busy.push_back(s);
  }
  if (busy.empty()) return KillResult::kNotBusy;
  for (RunningScript* s : busy) {
    if (s->wrote.load(std::memory_order_acquire)) return KillResult::kUnkillable;
  }
  for (RunningScript* s : busy) s->kill.store(true, std::memory_order_release);
  return KillResult::kKilled;
}

int64_t RunningScripts::SteadyNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace sluice::server
