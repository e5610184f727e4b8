#include "sluice/glob.h"

#include <cctype>
#include <utility>

namespace sluice {
namespace {

// Deeply nested '*' groups recurse; beyond this depth a pattern simply does not match.
constexpr int kMaxDepth = 1000;

// Byte i of p, or NUL past its end (Redis reads the terminating NUL of its strings there).
char At(std::string_view p, size_t i) { return i < p.size() ? p[i] : '\0'; }

char Fold(char c, bool nocase) {
  return nocase ? static_cast<char>(std::tolower(static_cast<unsigned char>(c))) : c;
}

// Matches one set "[...]" starting just after '['. Advances *pi to the set's closing ']'
// (or to the last byte of an unterminated set) and returns whether c is in the set.
bool MatchSet(std::string_view p, size_t* pi, char c, bool nocase) {
  c = Fold(c, nocase);
  size_t i = *pi;
  const bool negate = At(p, i) == '^';
  if (negate) ++i;
  bool matched = false;
  while (true) {
    if (At(p, i) == '\\' && p.size() - i >= 2) {
      ++i;
      if (Fold(p[i], nocase) == c) matched = true;
    } else if (At(p, i) == ']') {
      break;
    } else if (i >= p.size()) {
      --i;  // unterminated: the set ends with the pattern
      break;
    } else if (p.size() - i >= 3 && p[i + 1] == '-') {
      auto lo = static_cast<signed char>(Fold(p[i], nocase));
      auto hi = static_cast<signed char>(Fold(p[i + 2], nocase));
      if (lo > hi) std::swap(lo, hi);
      i += 2;
      auto sc = static_cast<signed char>(c);
      if (sc >= lo && sc <= hi) matched = true;
    } else if (Fold(p[i], nocase) == c) {
      matched = true;
    }
    ++i;
  }
  *pi = i;
  return negate ? !matched : matched;
}

// give_up: set once the rest of the pattern failed at every position of the string; then no
// earlier '*' can help either, which keeps matching polynomial (as Redis does).
bool Match(std::string_view p, std::string_view s, bool nocase, bool* give_up, int depth) {
  if (depth > kMaxDepth) return false;
  size_t pi = 0;
  size_t si = 0;
  while (pi < p.size() && si < s.size()) {
    switch (p[pi]) {
      case '*': {
        while (pi + 1 < p.size() && p[pi + 1] == '*') ++pi;
        if (pi + 1 == p.size()) return true;
        for (; si < s.size(); ++si) {
          if (Match(p.substr(pi + 1), s.substr(si), nocase, give_up, depth + 1)) return true;
          if (*give_up) return false;
        }
        *give_up = true;
        return false;
      }
      case '?':
        ++si;
        break;
      case '[':
        ++pi;
        if (!MatchSet(p, &pi, s[si], nocase)) return false;
        ++si;
        break;
      case '\\':
        if (p.size() - pi >= 2) ++pi;
        [[fallthrough]];
      default:
        if (Fold(p[pi], nocase) != Fold(s[si], nocase)) return false;
        ++si;
        break;
    }
    ++pi;
    if (si == s.size()) {
      while (pi < p.size() && p[pi] == '*') ++pi;
      break;
    }
  }
  return pi == p.size() && si == s.size();
}

}  // namespace

bool GlobMatch(std::string_view pattern, std::string_view str, bool nocase) {
  bool give_up = false;
  return Match(pattern, str, nocase, &give_up, 0);
}

std::string_view GlobLiteralPrefix(std::string_view pattern) {
  size_t n = pattern.find_first_of("*?[\\");
  return n == std::string_view::npos ? pattern : pattern.substr(0, n);
}

}  // namespace sluice
