#include "server/core/latency.h"

#include <algorithm>
#include <cstdio>

#include "server/core/args.h"

namespace sluice::server {

void LatencyMonitor::Add(std::string_view event, int64_t latency_ms, int64_t now_s) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = events_.find(event);
  if (it == events_.end()) it = events_.emplace(std::string(event), Series{}).first;
  Series& s = it->second;
  s.max_ms = std::max(s.max_ms, latency_ms);
  Sample& prev = s.samples[(s.idx + kSamples - 1) % kSamples];
  if (prev.time == now_s) {  // one sample a second: the worst
    prev.latency_ms = std::max(prev.latency_ms, latency_ms);
    return;
  }
  s.samples[s.idx] = Sample{now_s, latency_ms};
  s.idx = (s.idx + 1) % kSamples;
}

namespace {

std::vector<LatencyMonitor::Sample> Ordered(const LatencyMonitor::Series& s) {
  std::vector<LatencyMonitor::Sample> out;
  for (size_t j = 0; j < LatencyMonitor::kSamples; ++j) {
    const LatencyMonitor::Sample& sample = s.samples[(s.idx + j) % LatencyMonitor::kSamples];
    if (sample.time != 0) out.push_back(sample);
  }
  return out;
}

}  // namespace

std::vector<LatencyMonitor::Sample> LatencyMonitor::History(std::string_view event) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = events_.find(event);
  if (it == events_.end()) return {};
  return Ordered(it->second);
}

std::vector<LatencyMonitor::Latest> LatencyMonitor::LatestAll() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Latest> out;
  for (const auto& [name, s] : events_) {
    out.push_back({name, s.samples[(s.idx + kSamples - 1) % kSamples], s.max_ms});
  }
  return out;
}

int64_t LatencyMonitor::Reset(const std::vector<std::string_view>& events) {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t resets = 0;
  for (auto it = events_.begin(); it != events_.end();) {
    bool named = events.empty();
    for (std::string_view e : events) named = named || EqualsIgnoreCase(e, it->first);
    if (named) {
      it = events_.erase(it);
      ++resets;
    } else {
      ++it;
    }
  }
  return resets;
}

bool LatencyMonitor::Graph(std::string_view event, int64_t now_s, std::string* out) const {
  std::vector<Sample> samples;
  int64_t all_time = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = events_.find(event);
    if (it == events_.end()) return false;
    samples = Ordered(it->second);
    all_time = it->second.max_ms;
  }
  int64_t lo = 0, hi = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    lo = i == 0 ? samples[i].latency_ms : std::min(lo, samples[i].latency_ms);
    hi = i == 0 ? samples[i].latency_ms : std::max(hi, samples[i].latency_ms);
  }
  char head[256];
  std::snprintf(head, sizeof(head), "%.*s - high %lld ms, low %lld ms (all time high %lld ms)\n",
                static_cast<int>(event.size()), event.data(), static_cast<long long>(hi),
                static_cast<long long>(lo), static_cast<long long>(all_time));
  *out = head;
  *out += std::string(80, '-') + "\n";
  // Four rows of bars (the height relative to the range), then each sample's age as a label
  // written downwards, as Redis's sparkline does.
  constexpr int kRows = 4;
  std::vector<std::string> labels;
  for (const Sample& s : samples) {
    int64_t elapsed = now_s - s.time;
    char buf[32];
    if (elapsed < 60) {
      std::snprintf(buf, sizeof(buf), "%llds", static_cast<long long>(elapsed));
    } else if (elapsed < 3600) {
      std::snprintf(buf, sizeof(buf), "%lldm", static_cast<long long>(elapsed / 60));
    } else if (elapsed < 86400) {
      std::snprintf(buf, sizeof(buf), "%lldh", static_cast<long long>(elapsed / 3600));
    } else {
      std::snprintf(buf, sizeof(buf), "%lldd", static_cast<long long>(elapsed / 86400));
    }
    labels.emplace_back(buf);
  }
  const size_t cols = std::min<size_t>(samples.size(), 80);
  for (int row = 0; row < kRows; ++row) {
    std::string line;
    for (size_t i = 0; i < cols; ++i) {
      double rel = hi == lo ? 0.0 : double(samples[i].latency_ms - lo) / double(hi - lo);
      int steps = static_cast<int>(rel * (kRows * 2 - 1));  // 0..7 half-rows
      int from_bottom = kRows - 1 - row;
      char c = ' ';
      if (steps / 2 > from_bottom) c = '|';
      if (steps / 2 == from_bottom) c = steps % 2 ? '|' : '_';
      line += c;
    }
    *out += line + "\n";
  }
  size_t longest = 0;
  for (const std::string& l : labels) longest = std::max(longest, l.size());
  for (size_t r = 0; r < longest; ++r) {
    std::string line;
    for (size_t i = 0; i < cols; ++i) line += r < labels[i].size() ? labels[i][r] : ' ';
    *out += line + "\n";
  }
  return true;
}

std::string LatencyMonitor::Doctor(int64_t threshold_ms, int64_t now_s) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (events_.empty() && threshold_ms == 0) {
    return "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis "
           "instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in "
           "order to enable it. If we weren't in a deep space mission I'd suggest to take a look "
           "at https://redis.io/topics/latency-monitor.\n";
  }
  if (events_.empty()) {
    return "Dave, no latency spike was observed during the lifetime of this Redis instance, not "
           "in the slightest bit. I honestly think you ought to sit down calmly, take a stress "
           "pill, and think things over.\n";
  }
  std::string report =
      "Dave, I have observed latency spikes in this Redis instance. You don't mind talking "
      "about it, do you Dave?\n\n";
  int n = 0;
  for (const auto& [name, s] : events_) {
    std::vector<Sample> samples = Ordered(s);
    int64_t sum = 0, oldest = 0;
    for (const Sample& x : samples) {
      sum += x.latency_ms;
      if (oldest == 0 || x.time < oldest) oldest = x.time;
    }
    const auto count = static_cast<int64_t>(samples.size());
    int64_t avg = count ? sum / count : 0;
    int64_t period = count ? std::max<int64_t>(now_s - oldest, 1) : 0;
    int64_t mad = 0;
    for (const Sample& x : samples) mad += std::abs(avg - x.latency_ms);
    if (count) mad /= count;
    char line[512];
    std::snprintf(line, sizeof(line),
                  "%d. %s: %lld latency spikes (average %lldms, mean deviation %lldms, period "
                  "%.2f sec). Worst all time event %lldms.\n",
                  ++n, name.c_str(), static_cast<long long>(count), static_cast<long long>(avg),
                  static_cast<long long>(mad), count ? double(period) / double(count) : 0.0,
                  static_cast<long long>(s.max_ms));
    report += line;
  }
  report +=
      "\nWhile there are latency events logged, I'm not able to suggest any easy fix. Please use "
      "the Redis community to get some help, providing this report in your help request.\n";
  return report;
}

}  // namespace sluice::server
