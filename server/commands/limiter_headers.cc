#include "server/commands/limiter_headers.h"

namespace sluice::server {
namespace {

// Whole seconds, rounded up, from a reply's milliseconds (>= 0).
int64_t CeilSeconds(int64_t ms) { return ms / 1000 + (ms % 1000 != 0 ? 1 : 0); }

int64_t PolicySeconds(int64_t window_ns) {
  const int64_t s = window_ns / limiter::kNsPerSecond + (window_ns % limiter::kNsPerSecond != 0);
  return s < 1 ? 1 : s;
}

// The seconds a client should wait (t, Retry-After): until reset when allowed, until the call
// would pass when denied, until reset when it never can.
int64_t WaitSeconds(const limiter::Decision& d) {
  const int64_t retry_ms = limiter::CeilMs(d.retry_after_ns);
  if (!d.allowed && retry_ms >= 0) return CeilSeconds(retry_ms);
  return CeilSeconds(limiter::CeilMs(d.reset_after_ns));
}

void AppendItem(std::string* line, std::string_view name, char k1, int64_t v1, char k2,
                int64_t v2) {
  if (line->back() != ' ') *line += ", ";
  *line += '"';
  *line += name;
  *line += "\";";
  *line += k1;
  *line += '=';
  *line += std::to_string(v1);
  *line += ';';
  *line += k2;
  *line += '=';
  *line += std::to_string(v2);
}

}  // namespace

std::vector<std::string> RateLimitHeaders(std::span<const HeaderPolicy> policies,
                                          std::span<const limiter::Decision> groups,
                                          const limiter::Decision& overall) {
  std::string policy = "RateLimit-Policy: ";
  std::string state = "RateLimit: ";
  for (size_t i = 0; i < policies.size() && i < groups.size(); ++i) {
    const HeaderPolicy& p = policies[i];
    AppendItem(&policy, p.name, 'q', p.quota, 'w', PolicySeconds(p.window_ns));
    AppendItem(&state, p.name, 'r', groups[i].remaining, 't', WaitSeconds(groups[i]));
  }
  std::vector<std::string> lines = {std::move(policy), std::move(state)};
  if (!overall.allowed && overall.retry_after_ns >= 0) {
    lines.push_back("Retry-After: " + std::to_string(WaitSeconds(overall)));
  }
  return lines;
}

void WriteHeaders(protocol::ReplyWriter& out, const std::vector<std::string>& lines) {
  out.Array(lines.size());
  for (const std::string& line : lines) out.Bulk(line);
}

}  // namespace sluice::server
