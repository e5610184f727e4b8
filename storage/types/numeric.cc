#include "numeric.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace sluice::internal {

std::optional<int64_t> ParseInt64(std::string_view s) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  if (s == "0") return 0;
  size_t i = 0;
  bool negative = s[0] == '-';
  if (negative) ++i;
  if (i >= s.size() || s[i] < '1' || s[i] > '9') return std::nullopt;
  uint64_t magnitude = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    auto digit = static_cast<uint64_t>(s[i] - '0');
    if (magnitude > (std::numeric_limits<uint64_t>::max() - digit) / 10) return std::nullopt;
    magnitude = magnitude * 10 + digit;
  }
  constexpr auto kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (negative) {
    if (magnitude > kMax + 1) return std::nullopt;
    return static_cast<int64_t>(0 - magnitude);
  }
  if (magnitude > kMax) return std::nullopt;
  return static_cast<int64_t>(magnitude);
}

std::optional<long double> ParseLongDouble(std::string_view s) {
  constexpr size_t kMaxChars = 5 * 1024;  // Redis's MAX_LONG_DOUBLE_CHARS
  if (s.empty() || s.size() >= kMaxChars) return std::nullopt;
  std::string buf(s);
  if (std::isspace(static_cast<unsigned char>(buf[0]))) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  long double v = std::strtold(buf.c_str(), &end);
  // The whole value must parse: a NUL byte inside it must not end the number early.
  if (end != buf.c_str() + buf.size()) return std::nullopt;
  if (errno == ERANGE && (v == HUGE_VALL || v == -HUGE_VALL || std::fpclassify(v) == FP_ZERO)) {
    return std::nullopt;
  }
  if (std::isnan(v)) return std::nullopt;
  return v;
}

std::string FormatLongDouble(long double v) {
  char buf[5 * 1024];
  int n = std::snprintf(buf, sizeof(buf), "%.17Lf", v);
  if (n < 0 || static_cast<size_t>(n) + 1 > sizeof(buf)) return std::string();  // as Redis
  std::string out(buf, static_cast<size_t>(n));
  if (out.find('.') != std::string::npos) {
    while (out.back() == '0') out.pop_back();
    if (out.back() == '.') out.pop_back();
  }
  if (out == "-0") out = "0";
  return out;
}

}  // namespace sluice::internal
