// Redis's packed containers, as they appear (as one string) inside RDB objects: listpack
// (Redis 7), ziplist (before 7) and intset. Each decoder checks the container's header against
// its bytes and every entry's bounds; false on anything malformed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::formats {

// The entries in order; integers come back as their decimal text.
bool DecodeListpack(std::string_view blob, std::vector<std::string>* out);
bool DecodeZiplist(std::string_view blob, std::vector<std::string>* out);
// The members in the intset's (ascending) order; refuses unsorted or repeated members.
bool DecodeIntset(std::string_view blob, std::vector<std::string>* out);

// Builds a listpack byte for byte as Redis 7.0's listpack.c does: integers in their smallest
// encoding, strings that are canonical integers (lpStringToInt64) as integers too, each entry
// followed by its back-length; Finish() writes the header (total bytes, count or 65535) and
// the end byte. Not thread-safe; one listpack per builder.
class ListpackBuilder {
 public:
  void AppendInteger(int64_t v);
  void AppendString(std::string_view s);
  size_t count() const { return count_; }
  std::string Finish();

 private:
  void AppendBacklen(size_t entry_len);
  std::string body_;
  size_t count_ = 0;
};

}  // namespace sluice::formats
