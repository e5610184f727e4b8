#include "server/core/client_outbox.h"

#include "protocol/reply_writer.h"

namespace sluice::server {

bool ClientOutbox::Push(size_t n, std::string_view body, int64_t hard_limit) {
  return Append(static_cast<int64_t>(n), body, hard_limit);
}

bool ClientOutbox::PushEncoded(std::string_view bytes, int64_t hard_limit) {
  return Append(-1, bytes, hard_limit);
}

bool ClientOutbox::Append(int64_t n, std::string_view body, int64_t hard_limit) {
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    if (closed_ || overflowed_.load(std::memory_order_relaxed)) return false;
    const size_t before = queued_.size();
    if (n >= 0) protocol::ReplyWriter(&queued_, resp()).Push(static_cast<size_t>(n));
    queued_.append(body);
    if (hard_limit > 0 && queued_.size() + unsent_.load(std::memory_order_relaxed) >
                              static_cast<size_t>(hard_limit)) {
      queued_.resize(before);
      overflowed_.store(true, std::memory_order_release);
    } else {
      queued_bytes_.store(queued_.size(), std::memory_order_relaxed);
    }
    wake = !wake_pending_;
    wake_pending_ = true;
  }
  if (wake && wake_) wake_();
  return !overflowed();
}

void ClientOutbox::TakeInto(std::string* out) {
  std::lock_guard lock(mu_);
  wake_pending_ = false;
  if (queued_.empty()) return;
  out->append(queued_);
  queued_.clear();
  queued_bytes_.store(0, std::memory_order_relaxed);
}

void ClientOutbox::Close() {
  std::lock_guard lock(mu_);
  closed_ = true;
  std::string().swap(queued_);
  queued_bytes_.store(0, std::memory_order_relaxed);
}

}  // namespace sluice::server
