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

std::string ToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = AsciiLower(c);
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

namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool IsSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// One escape inside double quotes at line[*i] ('\\'); appends what it stands for.
void DoubleQuotedEscape(std::string_view line, size_t* i, std::string* word) {
  const char n = line[*i + 1];
  if (n == 'x' && *i + 3 < line.size() && HexValue(line[*i + 2]) >= 0 &&
      HexValue(line[*i + 3]) >= 0) {
    *word += static_cast<char>(HexValue(line[*i + 2]) * 16 + HexValue(line[*i + 3]));
    *i += 4;
    return;
  }
  switch (n) {
    case 'n':
      *word += '\n';
      break;
    case 'r':
      *word += '\r';
      break;
    case 't':
      *word += '\t';
      break;
    case 'b':
      *word += '\b';
      break;
    case 'a':
      *word += '\a';
      break;
    default:
      *word += n;
      break;
  }
  *i += 2;
}

}  // namespace

bool SplitArgs(std::string_view line, std::vector<std::string>* words) {
  size_t i = 0;
  while (true) {
    while (i < line.size() && IsSpace(line[i])) ++i;
    if (i >= line.size()) return true;
    std::string word;
    char quote = 0;
    bool done = false;
    while (i < line.size() && !done) {
      const char c = line[i];
      if (quote == 0) {
        if (IsSpace(c)) break;
        if (c == '"' || c == '\'') {
          quote = c;
        } else {
          word += c;
        }
        ++i;
      } else if (c == quote) {
        ++i;
        if (i < line.size() && !IsSpace(line[i])) return false;
        quote = 0;
        done = true;
      } else if (c == '\\' && i + 1 < line.size()) {
        if (quote == '"') {
          DoubleQuotedEscape(line, &i, &word);
        } else {
          const bool escaped_quote = line[i + 1] == '\'';
          word += escaped_quote ? '\'' : '\\';
          i += escaped_quote ? 2 : 1;
        }
      } else {
        word += c;
        ++i;
      }
    }
    if (quote != 0) return false;
    words->push_back(std::move(word));
  }
}

}  // namespace sluice::server
