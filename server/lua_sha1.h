// SHA-1 (FIPS 180-4) of a byte string, as the lower-case hex text Redis names scripts by.
// Pure function; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace sluice::server {

std::string Sha1Hex(std::string_view data);  // 40 lower-case hex digits

}  // namespace sluice::server
