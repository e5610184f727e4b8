// Time units: duration text (ParseDuration) and the rounding of replies (CeilMs, CellSeconds).
#include <string>

#include "internal.h"

namespace sluice::limiter {

int64_t CeilMs(int64_t ns) {
  if (ns < 0) return -1;
  return ns / kNsPerMs + (ns % kNsPerMs != 0 ? 1 : 0);
}

// redis-cell rounds a duration to seconds by looking only at whole milliseconds: 1.0004 s has a
// zero millisecond part and reports 1; 1.001 s reports 2.
int64_t CellSeconds(int64_t ns) {
  if (ns < 0) return -1;
  int64_t seconds = ns / kNsPerSecond;
  int64_t ms_part = (ns % kNsPerSecond) / kNsPerMs;
  return seconds + (ms_part != 0 ? 1 : 0);
}

namespace {

// The text echoed in an error, cut short so a huge argument cannot make a huge error.
std::string Quoted(std::string_view text) {
  constexpr size_t kMaxEcho = 64;
  std::string out = "'";
  if (text.size() > kMaxEcho) {
    out.append(text.substr(0, kMaxEcho));
    out.append("...");
  } else {
    out.append(text);
  }
  out.push_back('\'');
  return out;
}

}  // namespace

// Grammar: [1-9][0-9]* followed by nothing (seconds) or one of ms, s, m, h, d (lowercase).
// Leading zeros, signs, spaces and fractions are rejected, as Redis's integer arguments are.
std::string ParseDuration(std::string_view text, std::string_view arg_name, int64_t* ns) {
  auto error = [&](std::string_view why) {
    std::string msg = "invalid ";
    msg.append(arg_name);
    msg.push_back(' ');
    msg.append(Quoted(text));
    msg.append(": ");
    msg.append(why);
    return msg;
  };
  constexpr std::string_view kShape =
      "must be a positive integer with an optional unit (ms, s, m, h or d)";
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0) return error(kShape);
  std::string_view number = text.substr(0, digits);
  std::string_view unit = text.substr(digits);
  if (!unit.empty() && (unit[0] == '.' || unit[0] == ',')) {
    return error("fractions are not allowed (use a smaller unit, e.g. 1500ms)");
  }
  int64_t unit_ns = 0;
  if (unit.empty() || unit == "s") {
    unit_ns = kNsPerSecond;
  } else if (unit == "ms") {
    unit_ns = kNsPerMs;
  } else if (unit == "m") {
    unit_ns = 60 * kNsPerSecond;
  } else if (unit == "h") {
    unit_ns = 3600 * kNsPerSecond;
  } else if (unit == "d") {
    unit_ns = 86400 * kNsPerSecond;
  } else {
    return error("unknown unit (use ms, s, m, h or d)");
  }
  // All zeros is zero; otherwise leading zeros are malformed.
  if (number.find_first_not_of('0') == std::string_view::npos) return error("must be positive");
  if (number[0] == '0') return error(kShape);
  constexpr std::string_view kTooLong = "above the maximum of 10 years";
  int64_t count = 0;
  for (char c : number) {
    if (__builtin_mul_overflow(count, 10, &count) ||
        __builtin_add_overflow(count, c - '0', &count)) {
      return error(kTooLong);
    }
  }
  int64_t total = 0;
  if (__builtin_mul_overflow(count, unit_ns, &total) || total > kMaxDurationNs) {
    return error(kTooLong);
  }
  *ns = total;
  return "";
}

}  // namespace sluice::limiter
