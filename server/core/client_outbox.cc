#include "server/core/client_outbox.h"

#include "protocol/reply_writer.h"

namespace sluice::server {

bool ClientOutbox::Push(size_t n, std::string_view body, const OutputBufferLimit& limit) {
  return Append(static_cast<int64_t>(n), body, limit);
}

bool ClientOutbox::PushEncoded(std::string_view bytes, const OutputBufferLimit& limit) {
  return Append(-1, bytes, limit);
}

bool ClientOutbox::Append(int64_t n, std::string_view body, const OutputBufferLimit& limit) {
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    if (closed_ || overflowed_.load(std::memory_order_relaxed)) return false;
    const size_t unsent = unsent_.load(std::memory_order_relaxed);
    const size_t before = queued_.size();
    if (n >= 0) protocol::ReplyWriter(&queued_, resp()).Push(static_cast<size_t>(n));
    queued_.append(body);
    const auto over = [&](int64_t bound, size_t bytes) {
      return bound > 0 && bytes + unsent > static_cast<size_t>(bound);
    };
    const bool overflowed = over(limit.hard, queued_.size());
    if (overflowed) {
      queued_.resize(before);
      overflowed_.store(true, std::memory_order_release);
    } else {
      queued_bytes_.store(queued_.size(), std::memory_order_relaxed);
    }
    const bool crossed_soft =
        !overflowed && !over(limit.soft, before) && over(limit.soft, queued_.size());
    wake = !wake_pending_ || overflowed || crossed_soft;
    wake_pending_ = true;
  }
  if (wake && wake_) wake_();
  return !overflowed();
}

void ClientOutbox::TakeInto(std::string* out) {
  std::lock_guard lock(mu_);
  wake_pending_ = false;
  if (queued_.empty()) return;
  if (out->empty()) {
    out->swap(queued_);  // no copy of the messages (7% of a fan-out's CPU); buffers alternate
  } else {
    out->append(queued_);
  }
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
