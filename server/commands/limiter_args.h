// Argument parsing and the reply shape shared by every limiter command (cmd_limiters.cc).
// The contract is ../shared/spec/LIMITERS.md; user-facing text is in docs/limiters.md.
//
// Every function that can fail returns a Status of kind kInvalidArgument whose message names
// the offending argument (the text after "ERR "), so handlers pass it to ReplyError unchanged.
// Messages start with a lower-case word ("invalid ...", "unknown option ...") so that
// ReplyError never mistakes an option keyword for an error code.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "protocol/reply_writer.h"
#include "server/core/command.h"
#include "sluice/limiter.h"
#include "sluice/status.h"

namespace sluice::server {

// The options a limiter command may take after its positional arguments. A command passes the
// set it accepts; any other word is an unknown option.
enum LimiterOption : unsigned {
  kOptBurst = 1u << 0,           // BURST n      (n > 0, or n >= 0 with kOptBurstMayBeZero)
  kOptCost = 1u << 1,            // COST n       (n >= 0; default 1)
  kOptDelay = 1u << 2,           // DELAY n      (n >= 0)
  kOptNoDelay = 1u << 3,         // NODELAY      (no value; excludes DELAY)
  kOptId = 1u << 4,              // ID token     (non-empty)
  kOptBurstMayBeZero = 1u << 5,  // modifier: BURST 0 is meaningful (LEAKY.TAKE)
  kOptRefund = 1u << 6,          // REFUND n     (n >= 0; excludes COST)
  kOptHeaders = 1u << 7,         // HEADERS      (no value)
  kOptPolicy = 1u << 8,          // POLICY name  (RateLimit header policy name; see below)
};

struct LimiterOptions {
  unsigned seen = 0;  // the kOpt* bits of the options that were given
  int64_t burst = 0;
  int64_t cost = 1;
  int64_t delay = 0;
  int64_t refund = 0;
  std::string_view id;      // a view into the request's arguments
  std::string_view policy;  // likewise

  bool has(unsigned option) const { return (seen & option) != 0; }
};

// Parses args[first..] as options (keywords are case-insensitive). Errors: an unknown option,
// an option given twice, an option without its value, a value that is not a valid integer for
// it, DELAY together with NODELAY, COST together with REFUND, a POLICY name that is not 1 to 64
// printable ASCII characters without '"' or '\\'; each names the option. (POLICY without
// HEADERS is the caller's check: PolicyWithoutHeaders.)
Status ParseLimiterOptions(Args args, size_t first, unsigned accepted, LimiterOptions* out);

// A positive 64-bit integer ("invalid quota: must be a positive integer").
Status ParsePositive(std::string_view text, std::string_view name, int64_t* out);
// A non-negative 64-bit integer ("invalid max_burst: must be a non-negative integer").
Status ParseNonNegative(std::string_view text, std::string_view name, int64_t* out);
// A duration with an optional unit (limiter::ParseDuration), in ns.
Status ParseDurationArg(std::string_view text, std::string_view name, int64_t* ns);
// Wraps a limiter::Make*Params / ParseDuration message ("" means OK).
Status FromLimiterMessage(const std::string& message);

// "invalid POLICY: only together with HEADERS"
Status PolicyWithoutHeaders();

// The option keyword at args[i] and how many arguments it spans (1, or 2 with its value), for
// walking a request whose options end at some other word (LIMITS.TAKE's groups); 0 when args[i]
// is not one of `accepted`.
size_t OptionSpan(Args args, size_t i, unsigned accepted);

// The four algorithms a take or a LIMITS.TAKE group can use.
enum class LimitAlgo { kGcra, kWindow, kSliding, kLeaky };
// "GCRA", "WINDOW", "SLIDING", "LEAKY", case-insensitive.
std::optional<LimitAlgo> ParseAlgo(std::string_view word);
// The options an algorithm accepts besides COST/REFUND/HEADERS/POLICY.
unsigned AlgoOptions(LimitAlgo algo);

// One parsed limiter: the validated parameters, the RateLimit-Policy numbers (GCRA quota/period,
// WINDOW and SLIDING limit/window, LEAKY rate/period) and the options.
struct LimitArgs {
  limiter::LimitParams params;
  int64_t quota = 0;
  int64_t window_ns = 0;
  LimiterOptions opts;
};
// `args`: the algorithm's two positional parameters, then options (AlgoOptions(algo) plus
// `extra`). Errors name the argument, in argument order, then Make*Params' message.
// Requires args.size() >= 2.
Status ParseLimitArgs(LimitAlgo algo, Args args, unsigned extra, LimitArgs* out);

// A field a command appends after the five common ones. An integer, a bulk string, or nil
// when neither is set.
struct ExtraField {
  std::string_view name;
  std::optional<int64_t> integer;
  std::optional<std::string_view> bulk;
};

// Writes a limiter decision: allowed, remaining, retry_after_ms, reset_after_ms, limit, then
// `extras`. RESP2: a flat array of the values. RESP3: a map from the field names to the values,
// in that order. Times are rounded up to whole milliseconds (limiter::CeilMs).
void ReplyDecision(protocol::ReplyWriter& out, const limiter::Decision& decision,
                   std::span<const ExtraField> extras = {});
// ReplyDecision in parts: the container for 5 + `more` fields and the five common fields, then
// the caller writes `more` fields, each as FieldName(name) followed by its value.
void BeginDecision(protocol::ReplyWriter& out, const limiter::Decision& decision, size_t more);
void FieldName(protocol::ReplyWriter& out, std::string_view name);  // written in RESP3 only
void WriteExtra(protocol::ReplyWriter& out, const ExtraField& field);

}  // namespace sluice::server
