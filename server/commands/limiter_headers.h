// HEADERS [POLICY name] on the limiter takes: the HTTP header lines an application copies into
// its response, per draft-ietf-httpapi-ratelimit-headers (structured-field syntax). The
// contract is ../shared/spec/LIMITERS.md ("HEADERS"); docs/limiters.md shows them in use.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/reply_writer.h"
#include "sluice/limiter.h"

namespace sluice::server {

// One limit's policy: its name (validated by the option parser: printable ASCII, no '"' or
// '\\') and quota per window (window in ns; shown in whole seconds, rounded up, at least 1).
struct HeaderPolicy {
  std::string_view name;
  int64_t quota = 0;
  int64_t window_ns = 0;
};

// The lines, each one complete header field ("Name: value"), in this order:
//   RateLimit-Policy: "<name>";q=<quota>;w=<window s>[, ...one item per group]
//   RateLimit: "<name>";r=<remaining>;t=<s>[, ...]
//   Retry-After: <s>                (only when `overall` is denied and its retry_after >= 0)
// t is ceil(reset_after_ms / 1000) for a group that allows, ceil(retry_after_ms / 1000) for one
// that denies, or its reset time when it can never allow. Retry-After rounds the same way.
// policies.size() == groups.size() >= 1.
std::vector<std::string> RateLimitHeaders(std::span<const HeaderPolicy> policies,
                                          std::span<const limiter::Decision> groups,
                                          const limiter::Decision& overall);

// Writes the `headers` field's value: an array of bulk strings (both protocols).
void WriteHeaders(protocol::ReplyWriter& out, const std::vector<std::string>& lines);

}  // namespace sluice::server
