// Per-command latency histograms: LATENCY HISTOGRAM and INFO latencystats, as Redis 7.0 keeps
// them (latency-tracking, latency-tracking-info-percentiles).
//
// Redis records each call's duration (whole microseconds, times 1000: nanoseconds, clamped to
// [1, 1e9]) in an HdrHistogram with 2 significant digits; its replies come from that layout
// (LATENCY HISTOGRAM's power-of-two buckets are keyed by the highest value equivalent to
// 1024 ns * 2^k, divided by 1000: 1, 2, 4, 8, 16, 33, 66, 132, ...; a percentile is the highest
// value equivalent to the recorded value it falls on). Sluice keeps the same counts array
// (3072 counters) per command so both replies match Redis's byte for byte.
//
// Thread-safety: RecordCommandLatency is called on the command path from any thread and takes
// no lock: each thread counts into its own arrays (allocated at its first call of a command,
// never freed), with relaxed load+store. Sum/Reset read or clear every thread's arrays from any
// thread; a count made during a Reset may survive it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace sluice::server {

// latency-tracking (CONFIG SET latency-tracking yes|no): when off nothing is recorded.
void SetLatencyTracking(bool on);
inline std::atomic<bool>& LatencyTrackingFlag() {
  static std::atomic<bool> on{true};
  return on;
}
inline bool LatencyTrackingEnabled() {
  return LatencyTrackingFlag().load(std::memory_order_relaxed);
}

// A call of command `command_id` (CommandSpec::id) took `usec` microseconds.
void RecordCommandLatency(size_t command_id, uint64_t usec);

// One command's histogram summed over every thread: HdrHistogram counts (index layout as
// Redis's hdr_init(1, 1e9, 2)). total == 0: no call since the start or CONFIG RESETSTAT.
struct LatencyCounts {
  uint64_t total = 0;
  std::vector<uint64_t> counts;
};
// By command id (size kMaxCommandStats); commands never called have total 0.
std::vector<LatencyCounts> SumCommandLatencies();
// CONFIG RESETSTAT.
void ResetCommandLatencies();

// LATENCY HISTOGRAM's histogram_usec: (microseconds, cumulative calls) where the count grows.
std::vector<std::pair<int64_t, uint64_t>> LatencyBuckets(const LatencyCounts& h);
// hdr_value_at_percentile: nanoseconds at `percentile` (0..100).
int64_t LatencyAtPercentile(const LatencyCounts& h, double percentile);
// INFO latencystats' line body for these percentiles: "p50=16.063,p99=16.063,p99.9=16.063".
std::string FormatLatencyPercentiles(const LatencyCounts& h,
                                     const std::vector<double>& percentiles);

}  // namespace sluice::server
