// SHA-1 (FIPS 180-4) of a byte string, as the lower-case hex text Redis names scripts by.
// Pure function; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace sluice::server {

inline constexpr size_t kSha1HexLength = 40;

std::string Sha1Hex(std::string_view data);  // 40 lower-case hex digits
// The same 40 digits into out[0..39] (no terminator), without allocating.
void Sha1HexTo(std::string_view data, char* out);

}  // namespace sluice::server
