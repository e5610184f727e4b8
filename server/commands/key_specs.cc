#include "server/commands/key_specs.h"

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

#include "server/core/args.h"

namespace sluice::server {

namespace {

struct Row {
  const char* name;
  bool no_mandatory_keys;  // Redis's CMD_NO_MANDATORY_KEYS (EVAL, FCALL, ...)
  const char* specs;       // see tools/gen_key_specs.py
};

constexpr Row kRows[] = {
#include "server/commands/redis_key_specs.inc"
};

// Redis's CMD_KEY_* flags, in the order addReplyFlagsForKeyArgs prints them.
constexpr const char* kFlagNames[][2] = {
    {"RO", "RO"},
    {"RW", "RW"},
    {"OW", "OW"},
    {"RM", "RM"},
    {"ACCESS", "access"},
    {"UPDATE", "update"},
    {"INSERT", "insert"},
    {"DELETE", "delete"},
    {"NOT_KEY", "not_key"},
    {"INCOMPLETE", "incomplete"},
    {"VARIABLE_FLAGS", "variable_flags"},
};
constexpr uint32_t kRO = 1u << 0, kRW = 1u << 1, kOW = 1u << 2, kAccess = 1u << 4,
                   kUpdate = 1u << 5, kNotKey = 1u << 8, kIncomplete = 1u << 9;

struct Spec {
  uint32_t flags = 0;
  enum { kIndex, kKeyword, kUnknown } begin = kUnknown;
  int index = 0;  // kIndex: the position; kKeyword: startfrom
  std::string keyword;
  enum { kRange, kKeynum, kUnknownFind } find = kUnknownFind;
  int a = 0, b = 0, c = 0;  // range: lastkey, step, limit; keynum: keynumidx, firstkey, step
};

struct Entry {
  bool no_mandatory_keys = false;
  std::vector<Spec> specs;
};

std::vector<std::string_view> Split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    const size_t end = text.find(sep, start);
    parts.push_back(text.substr(start, end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

std::vector<std::string> FlagNames(uint32_t flags) {
  std::vector<std::string> names;
  for (size_t i = 0; i < std::size(kFlagNames); ++i) {
    if (flags & (1u << i)) names.emplace_back(kFlagNames[i][1]);
  }
  return names;
}

uint32_t ParseFlags(std::string_view text) {
  uint32_t flags = 0;
  for (std::string_view name : Split(text, ',')) {
    for (size_t i = 0; i < std::size(kFlagNames); ++i) {
      if (name == kFlagNames[i][0]) flags |= 1u << i;
    }
  }
  return flags;
}

// "1,2,3" -> {1, 2, 3}.
void ParseInts(std::string_view text, int* a, int* b, int* c) {
  int* out[] = {a, b, c};
  size_t n = 0;
  for (std::string_view part : Split(text, ',')) {
    if (n < 3) std::from_chars(part.data(), part.data() + part.size(), *out[n++]);
  }
}

Spec ParseSpec(std::string_view text) {
  std::vector<std::string_view> parts = Split(text, '/');
  Spec spec;
  spec.flags = ParseFlags(parts[0]);
  std::string_view begin = parts[1], find = parts[2];
  if (begin[0] == 'i') {
    spec.begin = Spec::kIndex;
    std::from_chars(begin.data() + 1, begin.data() + begin.size(), spec.index);
  } else if (begin[0] == 'k') {
    spec.begin = Spec::kKeyword;
    const size_t comma = begin.rfind(',');
    spec.keyword = std::string(begin.substr(1, comma - 1));
    std::from_chars(begin.data() + comma + 1, begin.data() + begin.size(), spec.index);
  }
  if (find[0] == 'r' || find[0] == 'n') {
    spec.find = find[0] == 'r' ? Spec::kRange : Spec::kKeynum;
    ParseInts(find.substr(1), &spec.a, &spec.b, &spec.c);
  }
  return spec;
}

const std::unordered_map<std::string_view, Entry>& Table() {
  static const auto* table = [] {
    auto* t = new std::unordered_map<std::string_view, Entry>;
    for (const Row& row : kRows) {
      Entry& e = (*t)[row.name];
      e.no_mandatory_keys = row.no_mandatory_keys;
      std::string_view specs = row.specs;
      if (specs.empty()) continue;
      for (std::string_view s : Split(specs, ';')) e.specs.push_back(ParseSpec(s));
    }
    return t;
  }();
  return *table;
}

// The first argument at or after `from` (walking backwards from argc+from when negative) equal to
// `keyword`, as Redis's KSPEC_BS_KEYWORD; 0 when absent. Returns the position after it.
int FindKeyword(Args line, const std::string& keyword, int from) {
  const int argc = static_cast<int>(line.size());
  const int start = from > 0 ? from : argc + from;
  const int end = from > 0 ? argc - 1 : 1;
  for (int i = start; i != end; i = start <= end ? i + 1 : i - 1) {
    if (i >= argc || i < 1) break;
    if (EqualsIgnoreCase(line[static_cast<size_t>(i)], keyword)) return i + 1;
  }
  // The loop stops before `end`, as Redis's does.
  return 0;
}

// Redis's getKeysUsingKeySpecs for complete specs: false on a spec the line does not satisfy.
bool KeysFromSpecs(const Entry& e, Args line, std::vector<FoundKey>* keys) {
  const int argc = static_cast<int>(line.size());
  for (const Spec& spec : e.specs) {
    if (spec.flags & kNotKey) continue;
    int first = spec.index;
    if (spec.begin == Spec::kKeyword) {
      first = FindKeyword(line, spec.keyword, spec.index);
      if (first == 0) continue;
    }
    int last = 0, step = 1;
    if (spec.find == Spec::kRange) {
      step = spec.b;
      if (spec.a >= 0) {
        last = first + spec.a;
      } else if (spec.c == 0) {
        last = argc + spec.a;
      } else {
        last = first + ((argc - first) / spec.c + spec.a);
      }
    } else {
      step = spec.c;
      const int at = first + spec.a;
      if (at >= argc) return false;
      std::optional<int64_t> n = ParseInt64(line[static_cast<size_t>(at)]);
      if (!n || *n < 0 || *n > argc) return false;
      first += spec.b;
      last = first + static_cast<int>(*n) - 1;
    }
    if (last >= argc || last < first || first >= argc) return false;
    for (int i = first; i <= last; i += step) {
      keys->push_back({static_cast<size_t>(i), FlagNames(spec.flags)});
    }
  }
  return true;
}

// SET and BITFIELD: Redis's setGetKeys / bitfieldGetKeys (VARIABLE_FLAGS specs).
uint32_t VariableFlags(std::string_view name, Args line) {
  if (name == "set") {
    for (size_t i = 3; i < line.size(); ++i) {
      if (EqualsIgnoreCase(line[i], "get")) return kRW | kAccess | kUpdate;
    }
    return kOW | kUpdate;
  }
  bool readonly = true;  // bitfield
  for (size_t i = 2; i < line.size(); ++i) {
    const size_t rem = line.size() - i - 1;
    if (EqualsIgnoreCase(line[i], "get") && rem >= 2) {
      i += 2;
    } else if ((EqualsIgnoreCase(line[i], "set") || EqualsIgnoreCase(line[i], "incrby")) &&
               rem >= 3) {
      readonly = false;
      break;
    } else if (EqualsIgnoreCase(line[i], "overflow") && rem >= 1) {
      i += 1;
    } else {
      readonly = false;
      break;
    }
  }
  return readonly ? (kRO | kAccess) : (kRW | kAccess | kUpdate);
}

bool Incomplete(const Entry& e) {
  for (const Spec& spec : e.specs) {
    if ((spec.flags & kIncomplete) || spec.begin == Spec::kUnknown ||
        spec.find == Spec::kUnknownFind) {
      return true;
    }
  }
  return false;
}

}  // namespace

RedisKeys FindRedisKeys(std::string_view name, Args line, const std::vector<int>& own) {
  RedisKeys r;
  const auto& table = Table();
  auto it = table.find(name);
  if (it == table.end()) return r;
  const Entry& e = it->second;
  bool has_keys = false;
  for (const Spec& spec : e.specs) has_keys |= !(spec.flags & kNotKey);
  if (!has_keys) {
    r.outcome = RedisKeys::kNoKeyArgs;
    return r;
  }
  if (name == "set" || name == "bitfield") {
    r.keys.push_back({1, FlagNames(VariableFlags(name, line))});
  } else if (Incomplete(e)) {
    // Redis's own finders (sortGetKeys, migrateGetKeys) give the first key the first spec's
    // flags and the others the last spec's (SORT's STORE, MIGRATE's KEYS).
    for (size_t i = 0; i < own.size(); ++i) {
      const Spec& spec = i == 0 ? e.specs.front() : e.specs.back();
      r.keys.push_back({static_cast<size_t>(own[i]), FlagNames(spec.flags & ~kIncomplete)});
    }
  } else if (!KeysFromSpecs(e, line, &r.keys)) {
    r.keys.clear();
  }
  r.outcome = r.keys.empty() && !e.no_mandatory_keys ? RedisKeys::kInvalid : RedisKeys::kFound;
  return r;
}

}  // namespace sluice::server
