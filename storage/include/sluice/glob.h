// Redis glob-style matching (KEYS, SCAN MATCH, CONFIG GET, COMMAND LIST), byte for byte as
// Redis's stringmatchlen:
//   *  any run of bytes          ?  any one byte
//   [abc] [^abc] [a-z]  sets, negated sets, ranges (a reversed range z-a works the same)
//   \x  the byte x itself (also inside sets)
// Quirks kept on purpose because clients see them: an unterminated set "[abc" acts as if
// closed at the end of the pattern; "[a-]" is the range a..']'; byte comparisons in ranges are
// on signed chars. Pure; thread-safe.
#pragma once

#include <string_view>

namespace sluice {

// nocase: ASCII case-insensitive (CONFIG GET and COMMAND LIST patterns, as in Redis).
bool GlobMatch(std::string_view pattern, std::string_view str, bool nocase = false);

// The bytes every match must start with (the pattern up to its first special character), so
// a scan can seek straight to them.
std::string_view GlobLiteralPrefix(std::string_view pattern);

}  // namespace sluice
