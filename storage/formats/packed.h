// Redis's packed containers, as they appear (as one string) inside RDB objects: listpack
// (Redis 7), ziplist (before 7) and intset. Each decoder checks the container's header against
// its bytes and every entry's bounds; false on anything malformed.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sluice::formats {

// The entries in order; integers come back as their decimal text.
bool DecodeListpack(std::string_view blob, std::vector<std::string>* out);
bool DecodeZiplist(std::string_view blob, std::vector<std::string>* out);
// The members in the intset's (ascending) order; refuses unsorted or repeated members.
bool DecodeIntset(std::string_view blob, std::vector<std::string>* out);

}  // namespace sluice::formats
