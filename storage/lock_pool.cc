#include "lock_pool.h"

#include <xxhash.h>

#include <algorithm>
#include <numeric>

namespace sluice::internal {

size_t LockPool::StripeOf(std::string_view raw_key) {
  return static_cast<size_t>(XXH3_64bits(raw_key.data(), raw_key.size()) % kStripes);
}

namespace {

std::vector<size_t> SortedStripes(std::vector<size_t> stripes) {
  std::sort(stripes.begin(), stripes.end());
  stripes.erase(std::unique(stripes.begin(), stripes.end()), stripes.end());
  return stripes;
}

template <typename Keys>
std::vector<size_t> StripesOf(const Keys& keys) {
  std::vector<size_t> stripes;
  stripes.reserve(keys.size());
  for (const auto& k : keys) stripes.push_back(LockPool::StripeOf(k));
  return SortedStripes(std::move(stripes));
}

}  // namespace

LockPool::MultiGuard::MultiGuard(LockPool& pool, std::vector<size_t> stripes)
    : pool_(&pool), stripes_(std::move(stripes)) {
  for (size_t s : stripes_) pool_->mutexes_[s].lock();
}

LockPool::MultiGuard::MultiGuard(LockPool& pool, const std::vector<std::string_view>& raw_keys)
    : MultiGuard(pool, StripesOf(raw_keys)) {}

LockPool::MultiGuard::MultiGuard(LockPool& pool, const std::vector<std::string>& raw_keys)
    : MultiGuard(pool, StripesOf(raw_keys)) {}

LockPool::MultiGuard LockPool::MultiGuard::All(LockPool& pool) {
  std::vector<size_t> all(kStripes);
  std::iota(all.begin(), all.end(), size_t{0});
  return MultiGuard(pool, std::move(all));
}

LockPool::MultiGuard::MultiGuard(MultiGuard&& other) noexcept
    : pool_(other.pool_), stripes_(std::move(other.stripes_)) {
  other.stripes_.clear();
}

LockPool::MultiGuard::~MultiGuard() {
  for (auto it = stripes_.rbegin(); it != stripes_.rend(); ++it) pool_->mutexes_[*it].unlock();
}

}  // namespace sluice::internal
