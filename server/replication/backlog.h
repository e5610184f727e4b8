// The replication backlog: the newest bytes of the replication stream in a ring buffer, with the
// stream's global byte offset (Redis's master_repl_offset), so a replica that lost its link can
// continue from where it stopped (PSYNC's partial resync) while those bytes are still held.
// Not thread-safe: Replication guards it with its mutex.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sluice::server::replication {

class Backlog {
 public:
  explicit Backlog(size_t capacity) : buf_(capacity == 0 ? 1 : capacity, '\0') {}

  // Appends the bytes; the offset grows by their size, the oldest bytes past the capacity go.
  void Append(std::string_view bytes);
  // The offset of the last byte appended (0 before any): master_repl_offset.
  int64_t offset() const { return offset_; }
  // Bytes held (repl_backlog_histlen) and the offset of the first one held
  // (repl_backlog_first_byte_offset: offset() - histlen() + 1).
  int64_t histlen() const { return histlen_; }
  int64_t first_offset() const { return offset_ - histlen_ + 1; }
  size_t capacity() const { return buf_.size(); }
  // Whether the bytes from `from` (the first byte a replica still needs, its offset + 1) up to
  // offset() are held (from == offset() + 1: nothing to send, still a continuation).
  bool Holds(int64_t from) const { return from >= first_offset() && from <= offset_ + 1; }
  // Appends the bytes from `from` to offset() to *out. Requires Holds(from).
  void CopyFrom(int64_t from, std::string* out) const;
  // Empties the backlog and sets the offset (a replica's after a full sync).
  void Reset(int64_t offset);
  // Changes the capacity, keeping the newest bytes that fit.
  void Resize(size_t capacity);

 private:
  std::string buf_;
  size_t head_ = 0;  // where the next byte goes
  int64_t histlen_ = 0;
  int64_t offset_ = 0;
};

}  // namespace sluice::server::replication
