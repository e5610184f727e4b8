// A one-key stand-in for the store in limiter tests: holds a value and an absolute expiry in ms,
// hides the value once the ms clock has passed its expiry (as Redis and sluice::Store do), and
// applies an Outcome the way the engine does (kPut sets value and expiry, kDelete removes the key).
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <string>

#include "sluice/limiter.h"

namespace sluice::limiter::testing {

// Scenario start used by the vectors: 1'700'000'000'000 ms since the epoch, in ns.
inline constexpr int64_t kStartMs = 1'700'000'000'000;
inline constexpr int64_t kStartNs = kStartMs * kNsPerMs;
inline constexpr int64_t Ms(int64_t ms) { return ms * kNsPerMs; }
// An instant `ms` after the scenario start, in ns since the epoch.
inline constexpr int64_t At(int64_t ms) { return kStartNs + ms * kNsPerMs; }

class FakeKey {
 public:
  // The state a take would see at now_ns (nullptr when missing or expired).
  const StoredState* Get(int64_t now_ns) {
    if (!value_) return nullptr;
    if (expire_at_ms_ >= 0 && expire_at_ms_ < now_ns / kNsPerMs) {
      value_.reset();
      return nullptr;
    }
    state_.value = *value_;
    state_.expire_at_ms = expire_at_ms_;
    return &state_;
  }
  void Apply(const Outcome& o) {
    if (o.write == Outcome::Write::kPut) {
      value_ = o.value;
      expire_at_ms_ = o.expire_at_ms;
    } else if (o.write == Outcome::Write::kDelete) {
      value_.reset();
      expire_at_ms_ = -1;
    }
  }
  void Set(std::string value, int64_t expire_at_ms = -1) {
    value_ = std::move(value);
    expire_at_ms_ = expire_at_ms;
  }
  bool exists() const { return value_.has_value(); }
  const std::string& value() const { return *value_; }
  int64_t expire_at_ms() const { return expire_at_ms_; }

 private:
  std::optional<std::string> value_;
  int64_t expire_at_ms_ = -1;
  StoredState state_;
};

// Checks the take contract on a take's outcome (the state decoded; a denied call and COST 0 write
// nothing; an allowed call with a cost writes) and applies it to `key`, as the engine would.
inline Outcome CheckAndApply(FakeKey& key, Outcome o, int64_t cost) {
  REQUIRE_FALSE(o.corrupt);
  CHECK(o.write ==
        ((o.decision.allowed && cost > 0) ? Outcome::Write::kPut : Outcome::Write::kNone));
  key.Apply(o);
  return o;
}

}  // namespace sluice::limiter::testing
