// Redis's number <-> string rules for values stored as strings. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sluice::internal {

// Redis's string2ll: optional '-', digits without a leading zero ("0" alone is fine), no
// spaces, no '+', at most 20 characters, within int64. nullopt otherwise.
std::optional<int64_t> ParseInt64(std::string_view s);
// Redis's string2ld: strtold must consume the text up to its end or to an embedded NUL (as C
// string parsing does), no leading space, not NaN, no overflow. Accepts "inf".
std::optional<long double> ParseLongDouble(std::string_view s);
// Redis's human-friendly long double: "%.17Lf", then trailing zeros and a trailing '.' removed;
// "-0" becomes "0".
std::string FormatLongDouble(long double v);

}  // namespace sluice::internal
