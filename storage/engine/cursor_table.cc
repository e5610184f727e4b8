// The SCAN cursor table (cursor_table.h).
#include "cursor_table.h"

#include <random>
#include <utility>

namespace sluice::internal {

uint64_t CursorTable::Add(Position pos) {
  std::lock_guard<std::mutex> l(mu_);
  uint64_t id = 0;
  do {
    id = (RandomU64() ^ ++next_salt_) & ((uint64_t{1} << 63) - 1);
  } while (id == 0 || by_id_.count(id) != 0);
  by_id_.emplace(id, std::move(pos));
  order_.push_back(id);
  while (order_.size() > kCapacity) {
    by_id_.erase(order_.front());
    order_.pop_front();
  }
  return id;
}

std::optional<CursorTable::Position> CursorTable::Find(uint64_t id) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = by_id_.find(id);
  if (it == by_id_.end()) return std::nullopt;
  return it->second;
}

uint64_t RandomU64() {
  thread_local std::mt19937_64 rng{(uint64_t{std::random_device{}()} << 32) ^
                                   std::random_device{}()};
  return rng();
}

}  // namespace sluice::internal
