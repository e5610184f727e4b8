// ClientOutbox: what other threads send one connection out of band (pub/sub messages). Any
// thread appends; the connection's own thread takes the bytes and writes them between its
// ordinary replies, so a publisher never waits for a subscriber's socket. The first append after
// a take wakes the owner once (its wake function posts to the connection's thread).
//
// Thread-safety: every method may be called from any thread, except set_wake (before the first
// Push) and TakeInto (the owner's thread).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>

#include "server/core/config.h"

namespace sluice::server {

class ClientOutbox {
 public:
  // Must only post work to the owner's thread; called without the outbox's lock.
  using WakeFn = std::function<void()>;

  void set_wake(WakeFn wake) { wake_ = std::move(wake); }

  // The protocol the owner speaks (2 or 3): a message is rendered as it was when published, as
  // Redis renders it into the client's buffer at PUBLISH time.
  void set_resp(int resp) { resp_.store(resp, std::memory_order_relaxed); }
  int resp() const { return resp_.load(std::memory_order_relaxed); }

  // The owner's replies not yet written to its socket (bytes), counted against the hard limit.
  void set_unsent(size_t bytes) { unsent_.store(bytes, std::memory_order_relaxed); }

  // Appends one frame of `n` elements whose encoded elements are `body`: a RESP3 push (>n) or a
  // RESP2 array (*n) per resp(). When the owner's pending bytes (queued + unsent) would pass
  // `limit.hard` (0: no limit), the frame is dropped, the outbox marked overflowed (the owner
  // closes its connection) and false returned. A closed outbox drops everything. Besides the
  // first push after a take, the push that overflows it and the one that takes the pending
  // bytes past `limit.soft` wake the owner again (it checks its limits: a write stalled by a
  // client that does not read leaves no other occasion).
  bool Push(size_t n, std::string_view body, const OutputBufferLimit& limit);
  // As Push, for bytes already encoded whole (a MONITOR line, "+...\r\n").
  bool PushEncoded(std::string_view bytes, const OutputBufferLimit& limit);

  // Owner's thread: appends every queued byte to *out, in push order, and empties the queue.
  void TakeInto(std::string* out);

  // Bytes queued and not yet taken.
  size_t queued_bytes() const { return queued_bytes_.load(std::memory_order_relaxed); }
  bool overflowed() const { return overflowed_.load(std::memory_order_acquire); }

  // The connection is gone: later pushes are dropped and wake nobody.
  void Close();

 private:
  // Push's body: appends the frame (the header when n >= 0, then body) under the lock, or drops
  // it past the limit; wakes the owner outside the lock.
  bool Append(int64_t n, std::string_view body, const OutputBufferLimit& limit);

  mutable std::mutex mu_;
  std::string queued_;         // guarded by mu_
  bool wake_pending_ = false;  // guarded by mu_: a wake was sent and no take followed
  bool closed_ = false;        // guarded by mu_
  WakeFn wake_;
  std::atomic<size_t> queued_bytes_{0};
  std::atomic<size_t> unsent_{0};
  std::atomic<int> resp_{2};
  std::atomic<bool> overflowed_{false};
};

}  // namespace sluice::server
