// Argument parsing shared by every command family, with Redis's exact acceptance rules, so a
// value Redis rejects is rejected here too (" 1", "+1", "01", "-0", overflow, ...).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::server {

// Redis's string2ll: optional '-', then digits with no leading zero ("0" alone is fine), no
// spaces, no '+', within int64. nullopt otherwise.
std::optional<int64_t> ParseInt64(std::string_view s);
// Redis's string2ld: strtold over the whole string, no leading space, not NaN. Accepts "inf".
std::optional<long double> ParseLongDouble(std::string_view s);
// Redis's SCAN cursor: an unsigned decimal (strtoull over the whole string, no leading space).
std::optional<uint64_t> ParseScanCursor(std::string_view s);
// 'A'-'Z' folded to 'a'-'z', every other byte unchanged: the "C" locale's tolower, without a
// call per byte (option keywords are compared for every argument of every command).
inline char AsciiLower(char c) {
  const auto u = static_cast<unsigned char>(c);
  return static_cast<char>(static_cast<unsigned>(u - 'A') < 26u ? u | 0x20 : u);
}
// ASCII case-insensitive equality (command names, option keywords).
inline bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i] && AsciiLower(a[i]) != AsciiLower(b[i])) return false;
  }
  return true;
}

// Redis's sdssplitargs (redis.conf lines, a library's "#!lua name=..." line): words split at
// spaces; "double quotes" with \n \r \t \b \a \\ \" \xHH escapes and 'single quotes' with \'
// only, opening anywhere in a word (name="foo" is name=foo); a closing quote must be followed
// by a space or the end. False on unbalanced quotes or text right after a closing quote.
bool SplitArgs(std::string_view line, std::vector<std::string>* words);
std::string ToLower(std::string_view s);

}  // namespace sluice::server
