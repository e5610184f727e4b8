#include "server/core/args.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace sluice::server {

std::optional<int64_t> ParseInt64(std::string_view s) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  if (s == "0") return 0;
  size_t i = 0;
  bool negative = false;
  if (s[0] == '-') {
    negative = true;
    i = 1;
    if (s.size() == 1) return std::nullopt;
  }
  if (s[i] < '1' || s[i] > '9') return std::nullopt;
  uint64_t magnitude = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    uint64_t digit = static_cast<uint64_t>(s[i] - '0');
    if (magnitude > (std::numeric_limits<uint64_t>::max() - digit) / 10) return std::nullopt;
    magnitude = magnitude * 10 + digit;
  }
  constexpr uint64_t kMaxPositive = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (negative) {
    if (magnitude > kMaxPositive + 1) return std::nullopt;
    return static_cast<int64_t>(0 - magnitude);
  }
  if (magnitude > kMaxPositive) return std::nullopt;
  return static_cast<int64_t>(magnitude);
}

std::optional<long double> ParseLongDouble(std::string_view s) {
  // Redis caps the input at MAX_LONG_DOUBLE_CHARS (5k) and rejects leading whitespace.
  if (s.empty() || s.size() >= 5 * 1024) return std::nullopt;
  if (std::isspace(static_cast<unsigned char>(s[0]))) return std::nullopt;
  std::string buf(s);  // strtold needs a terminated string
  char* end = nullptr;
  errno = 0;
  long double value = std::strtold(buf.c_str(), &end);
  if (end != buf.c_str() + buf.size()) return std::nullopt;
  if (errno == ERANGE &&
      (value == HUGE_VALL || value == -HUGE_VALL || std::fpclassify(value) == FP_ZERO))
    return std::nullopt;
  if (std::isnan(value)) return std::nullopt;
  return value;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  }
  return true;
}

std::string ToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::optional<uint64_t> ParseScanCursor(std::string_view text) {
  if (!text.empty() && std::isspace(static_cast<unsigned char>(text[0]))) return std::nullopt;
  std::string buf(text);  // strtoull needs a terminated string
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(buf.c_str(), &end, 10);
  if (*end != '\0' || errno == ERANGE) return std::nullopt;
  return static_cast<uint64_t>(v);
}

}  // namespace sluice::server
