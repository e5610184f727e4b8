#include "lock_pool.h"

#include <xxhash.h>

#include <algorithm>
#include <numeric>

namespace sluice::internal {

size_t LockPool::StripeOf(std::string_view raw_key) { return StripeOfHash(HashOf(raw_key)); }

uint64_t LockPool::HashOf(std::string_view raw_key) {
  return XXH3_64bits(raw_key.data(), raw_key.size());
}

namespace {

std::vector<size_t> SortedStripes(std::vector<size_t> stripes) {
  std::sort(stripes.begin(), stripes.end());
  stripes.erase(std::unique(stripes.begin(), stripes.end()), stripes.end());
  return stripes;
}

template <typename Keys>
std::vector<size_t> StripesOf(const Keys& keys, size_t n) {
  std::vector<size_t> stripes;
  stripes.reserve(n);
  for (size_t i = 0; i < n; ++i) stripes.push_back(LockPool::StripeOf(keys[i]));
  return SortedStripes(std::move(stripes));
}

}  // namespace

LockPool::MultiGuard::MultiGuard(LockPool& pool, std::vector<size_t> stripes)
    : pool_(&pool), stripes_(std::move(stripes)) {
  for (size_t s : stripes_) pool_->stripes_[s].mu.lock();
}

LockPool::MultiGuard::MultiGuard(LockPool& pool, const std::vector<std::string_view>& raw_keys)
    : MultiGuard(pool, StripesOf(raw_keys, raw_keys.size())) {}

LockPool::MultiGuard::MultiGuard(LockPool& pool, const std::vector<std::string>& raw_keys)
    : MultiGuard(pool, StripesOf(raw_keys, raw_keys.size())) {}

LockPool::MultiGuard::MultiGuard(LockPool& pool, const std::vector<std::string>& raw_keys, size_t n)
    : MultiGuard(pool, StripesOf(raw_keys, n)) {}

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
  for (auto it = stripes_.rbegin(); it != stripes_.rend(); ++it) pool_->stripes_[*it].mu.unlock();
}

void LockSet::Lock(LockPool& pool) {
  pool_ = &pool;
  if (all_) {
    stripes_.resize(LockPool::kStripes);
    std::iota(stripes_.begin(), stripes_.end(), size_t{0});
  } else {
    std::sort(stripes_.begin(), stripes_.end());
    stripes_.erase(std::unique(stripes_.begin(), stripes_.end()), stripes_.end());
  }
  for (size_t s : stripes_) pool.stripes_[s].mu.lock();
}

bool LockSet::Holds(std::string_view raw_key) const {
  if (pool_ == nullptr) return false;
  if (all_) return true;
  return std::binary_search(stripes_.begin(), stripes_.end(), LockPool::StripeOf(raw_key));
}

bool LockSet::TryAcquire(std::string_view raw_key) {
  if (pool_ == nullptr) return false;
  if (all_) return true;
  const size_t stripe = LockPool::StripeOf(raw_key);
  auto it = std::lower_bound(stripes_.begin(), stripes_.end(), stripe);
  if (it != stripes_.end() && *it == stripe) return true;
  if (!pool_->stripes_[stripe].mu.try_lock()) return false;
  stripes_.insert(it, stripe);
  return true;
}

void LockSet::MarkWritten(uint64_t seq) {
  if (pool_ == nullptr) return;
  for (size_t s : stripes_) pool_->stripes_[s].write_mark = seq;  // every stripe, when all_
}

void LockSet::BumpVersions() {
  if (pool_ == nullptr) return;
  for (size_t s : stripes_) {  // every stripe, when all_
    pool_->write_versions_[s].fetch_add(1, std::memory_order_seq_cst);
  }
}

void LockSet::Unlock() {
  if (pool_ != nullptr) {
    for (auto it = stripes_.rbegin(); it != stripes_.rend(); ++it) pool_->stripes_[*it].mu.unlock();
  }
  pool_ = nullptr;
  stripes_.clear();
  all_ = false;
}

}  // namespace sluice::internal
