#include "server/scripting/lua_script_cache.h"

#include <algorithm>
#include <cctype>
#include <chrono>

#include "server/scripting/lua_sha1.h"

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

}  // namespace sluice::server
