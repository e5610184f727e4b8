#include "server/lua_script_cache.h"

#include <algorithm>
#include <cctype>
#include <chrono>

#include "server/lua_sha1.h"

namespace sluice::server {

namespace {

// Generations are drawn from one process-wide counter: a new cache or a flush never repeats one.
std::atomic<uint64_t> g_next_generation{1};

std::string LowerHex(std::string_view sha) {
  std::string s(sha);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

ScriptCache::ScriptCache() : generation_(g_next_generation.fetch_add(1)) {}

std::string ScriptCache::Add(std::string_view body) {
  std::string sha = Sha1Hex(body);
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = scripts_.try_emplace(sha, body);
  if (inserted) bytes_ += body.size() + sha.size();
  return sha;
}

std::optional<std::string> ScriptCache::Get(std::string_view sha) const {
  if (sha.size() != 40) return std::nullopt;
  const std::string key = LowerHex(sha);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = scripts_.find(key);
  if (it == scripts_.end()) return std::nullopt;
  return it->second;
}

bool ScriptCache::Exists(std::string_view sha) const {
  if (sha.size() != 40) return false;
  const std::string key = LowerHex(sha);
  std::lock_guard<std::mutex> lock(mu_);
  return scripts_.count(key) > 0;
}

void ScriptCache::Flush() {
  std::lock_guard<std::mutex> lock(mu_);
  scripts_.clear();
  bytes_ = 0;
  generation_.store(g_next_generation.fetch_add(1), std::memory_order_release);
}

size_t ScriptCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return scripts_.size();
}

size_t ScriptCache::body_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_;
}

void RunningScripts::Add(RunningScript* script) {
  std::lock_guard<std::mutex> lock(mu_);
  running_.push_back(script);
  count_.fetch_add(1, std::memory_order_release);
}

void RunningScripts::Remove(RunningScript* script) {
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
