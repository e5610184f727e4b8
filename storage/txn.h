// Txn: one atomic read-modify-write over keys whose stripes the caller already holds.
// Read -> compute -> Put/Delete -> Commit writes one rocksdb::WriteBatch. The transaction's
// time is fixed when it starts (like Redis's command time), so every check in one command sees
// the same "now". Not thread-safe (one per command, on the caller's stack).
//
// Allocation: the batch, the read buffer and the key lists are this thread's reusable scratch
// (scratch.h), cleared when the Txn starts, so a Txn in steady state allocates nothing itself.
#pragma once

#include <rocksdb/slice.h>
#include <rocksdb/write_batch.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scratch.h"
#include "store_impl.h"

namespace sluice::internal {

class Txn {
 public:
  Txn(Store::Impl& impl, int64_t now_ms);
  explicit Txn(Store::Impl& impl) : Txn(impl, impl.clock().NowMs()) {}
  ~Txn();
  Txn(const Txn&) = delete;
  Txn& operator=(const Txn&) = delete;

  int64_t now_ms() const { return now_ms_; }
  // Redis's checkAlreadyExpired: an expiry at or before now deletes the key at once.
  bool AlreadyExpired(int64_t at_ms) const { return at_ms <= now_ms_; }

  // The live value of raw_key, or nullopt when missing or expired. An expired value found
  // here is deleted by Commit (and counted in Stats::expired_keys) unless this txn writes
  // the key itself.
  Result<std::optional<Entry>> Read(const std::string& raw_key);
  // Read without copying: the view is valid until the next Read/ReadView of this Txn or its end.
  Result<std::optional<EntryView>> ReadView(const std::string& raw_key);
  void Put(const std::string& raw_key, ValueKind kind, int64_t expire_at_ms,
           std::string_view payload);
  void Put(const std::string& raw_key, const Entry& e) {
    Put(raw_key, e.kind, e.expire_at_ms, e.payload);
  }
  void Delete(const std::string& raw_key);
  // How many expired values Read found (Commit removes them).
  int64_t expired_found() const { return static_cast<int64_t>(s_->expired.n); }
  // Writes the batch; durable=false skips kAlways's fsync (see Store::Impl::Write).
  Status Commit(bool durable = true);

 private:
  // A list of keys kept in reused strings: clearing it keeps every string's capacity.
  struct KeyList {
    std::vector<std::string> slots;
    size_t n = 0;
    void Add(std::string_view k);
    bool Contains(std::string_view k) const;
  };
  struct Scratch {
    rocksdb::WriteBatch batch;
    rocksdb::PinnableSlice read;
    KeyList expired;  // expired values Read found, each once
    KeyList written;  // keys this txn Put or Deleted
  };

  Store::Impl& impl_;
  int64_t now_ms_;
  Borrowed<Scratch> scratch_;
  Scratch* s_;
};

}  // namespace sluice::internal
