#include "server/replication/backlog.h"

#include <algorithm>
#include <cstddef>

namespace sluice::server::replication {

void Backlog::Append(std::string_view bytes) {
  offset_ += static_cast<int64_t>(bytes.size());
  const size_t cap = buf_.size();
  if (bytes.size() >= cap) {  // only the tail fits
    bytes = bytes.substr(bytes.size() - cap);
    std::copy(bytes.begin(), bytes.end(), buf_.begin());
    head_ = 0;
    histlen_ = static_cast<int64_t>(cap);
    return;
  }
  const size_t first = std::min(bytes.size(), cap - head_);
  std::copy(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(first),
            buf_.begin() + head_);
  std::copy(bytes.begin() + static_cast<std::ptrdiff_t>(first), bytes.end(), buf_.begin());
  head_ = (head_ + bytes.size()) % cap;
  histlen_ =
      std::min<int64_t>(histlen_ + static_cast<int64_t>(bytes.size()), static_cast<int64_t>(cap));
}

void Backlog::CopyFrom(int64_t from, std::string* out) const {
  const int64_t n = offset_ - from + 1;
  if (n <= 0) return;
  const size_t cap = buf_.size();
  // The byte at offset_ sits just before head_; `from` is n-1 bytes before it.
  size_t start = (head_ + cap - static_cast<size_t>(n) % cap) % cap;
  if (static_cast<size_t>(n) == cap) start = head_;
  const size_t first = std::min(static_cast<size_t>(n), cap - start);
  out->append(buf_, start, first);
  out->append(buf_, 0, static_cast<size_t>(n) - first);
}

void Backlog::Reset(int64_t offset) {
  head_ = 0;
  histlen_ = 0;
  offset_ = offset;
}

void Backlog::Resize(size_t capacity) {
  if (capacity == 0) capacity = 1;
  if (capacity == buf_.size()) return;
  std::string held;
  CopyFrom(first_offset(), &held);
  const int64_t offset = offset_;
  buf_.assign(capacity, '\0');
  head_ = 0;
  histlen_ = 0;
  offset_ = offset - static_cast<int64_t>(held.size());
  Append(held);
}

}  // namespace sluice::server::replication
