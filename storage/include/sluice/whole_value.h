// WholeValue: a key's whole value as plain data, the unit DUMP/RESTORE, MIGRATE and snapshots
// move (Store::Transaction::ReadWhole / WriteWhole; storage/formats turns it into Redis's bytes).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace sluice {

enum class ValueKind : unsigned char;  // sluice/store.h (which includes this file)

// Only the member of `kind` is meaningful; the others stay empty. Collections are never empty
// (an empty collection is no key at all, as in Redis).
struct WholeValue {
  ValueKind kind{};                                         // kString
  std::string string;                                       // kString
  std::vector<std::string> elements;                        // kList (head first), kSet
  std::vector<std::pair<std::string, std::string>> fields;  // kHash (field, value)
  std::vector<std::pair<std::string, double>> scored;       // kZSet (member, score)

  bool operator==(const WholeValue&) const = default;
};

}  // namespace sluice
