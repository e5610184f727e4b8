// LATENCY's monitor (Redis 7.0's latency.c as behaviour): per event class ("command",
// "fast-command", ...) the last 160 samples, at most one per second (the worst of that second),
// and the worst latency ever seen; samples are added only when they reach
// latency-monitor-threshold (the caller checks). Thread-safe: one mutex, taken only when a
// sample is recorded or read.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::server {

class LatencyMonitor {
 public:
  static constexpr size_t kSamples = 160;
  struct Sample {
    int64_t time = 0;  // Unix seconds; 0: an empty slot
    int64_t latency_ms = 0;
  };
  struct Latest {
    std::string event;
    Sample last;
    int64_t max_ms = 0;
  };
  struct Series {
    Sample samples[kSamples];
    size_t idx = 0;  // next slot
    int64_t max_ms = 0;
  };

  void Add(std::string_view event, int64_t latency_ms, int64_t now_s);
  // Samples oldest first (LATENCY HISTORY); empty for an unknown event.
  std::vector<Sample> History(std::string_view event) const;
  std::vector<Latest> LatestAll() const;  // LATENCY LATEST, events in name order
  // Removes every event (`events` empty) or those named (case-insensitive); how many went.
  int64_t Reset(const std::vector<std::string_view>& events);
  // LATENCY GRAPH's text; false when the event has no samples.
  bool Graph(std::string_view event, int64_t now_s, std::string* out) const;
  // LATENCY DOCTOR's report; `threshold_ms` is latency-monitor-threshold.
  std::string Doctor(int64_t threshold_ms, int64_t now_s) const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, Series, std::less<>> events_;
};

}  // namespace sluice::server
