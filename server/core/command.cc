#include "server/core/command.h"

#include <cassert>
#include <cctype>
#include <cstring>
#include <utility>

#include "server/core/acl_categories.h"
#include "server/core/args.h"

namespace sluice::server {

namespace {

// Lower-cases `name` into a per-thread buffer whose capacity is kept, so a lookup allocates
// only until the buffer has grown to the longest name seen on this thread.
const std::string& LowerScratch(std::string_view name) {
  thread_local std::string scratch;
  scratch.assign(name);
  for (char& c : scratch) c = AsciiLower(c);
  return scratch;
}

}  // namespace

CommandSpec MakeSpec(std::string group, std::string name, int arity, uint32_t flags, KeyRange keys,
                     Handler handler, std::string summary, std::string since, std::string hint) {
  return CommandSpec{.name = std::move(name),
                     .arity = arity,
                     .flags = flags,
                     .first_key = keys.first,
                     .last_key = keys.last,
                     .key_step = keys.step,
                     .handler = handler,
                     .key_specs = {},
                     .group = std::move(group),
                     .summary = std::move(summary),
                     .since = std::move(since),
                     .arguments_hint = std::move(hint),
                     .acl_key_perms = {}};
}

void CommandTable::Add(CommandSpec spec) {
  std::string key = LowerScratch(spec.name);
  spec.name = key;
  spec.id = specs_.size();
  if (spec.acl_categories == 0) spec.acl_categories = AclCategoriesOf(spec);
  spec.acl_key_perms = AclKeyPermsOf(spec);
  assert(index_.find(key) == index_.end() && "command registered twice");
  index_.emplace(std::move(key), specs_.size());
  specs_.push_back(std::move(spec));
}

std::atomic<uint64_t> CommandTable::Id::next{1};

const CommandSpec* CommandTable::Find(std::string_view name) const {
  // Longer than any command name: unknown, and no need to copy it.
  constexpr size_t kMaxNameLen = 64;
  if (name.empty() || name.size() > kMaxNameLen) return nullptr;
  // Names this thread found lately, byte for byte, in which table, in a small direct-mapped
  // memo: a pipeline repeats one command, a connection looks each command up twice (to prefetch
  // its key, then to run it), and a script calls the same few commands again and again (the
  // lower-casing and string hash of a miss were 2.6% of the server's samples under BullMQ).
  // Positions in specs_ never change (Add appends), so a slot holds one, not a pointer.
  struct Memo {
    uint64_t table = 0;
    size_t index = 0;
    size_t size = 0;
    char name[kMaxNameLen];
  };
  constexpr size_t kSlots = 64;
  thread_local Memo memo[kSlots];
  uint32_t hash = 2166136261u;  // FNV-1a over the name's bytes (a few of them)
  for (char c : name) hash = (hash ^ static_cast<unsigned char>(c)) * 16777619u;
  Memo& slot = memo[hash % kSlots];
  if (slot.table == id_.value && slot.size == name.size() &&
      std::memcmp(slot.name, name.data(), name.size()) == 0) {
    return &specs_[slot.index];
  }
  auto it = index_.find(LowerScratch(name));
  if (it == index_.end()) return nullptr;
  slot.table = id_.value;
  slot.index = it->second;
  slot.size = name.size();
  std::memcpy(slot.name, name.data(), name.size());
  return &specs_[it->second];
}

bool ArityOk(const CommandSpec& spec, size_t argc) {
  if (spec.arity >= 0) return argc == static_cast<size_t>(spec.arity);
  return argc >= static_cast<size_t>(-spec.arity);
}

void CommandKeyPositions(const CommandSpec& spec, Args args, std::vector<int>* positions) {
  if (spec.find_keys != nullptr) return spec.find_keys(args, positions);
  if (spec.first_key <= 0 || spec.key_step <= 0) return;
  const int argc = static_cast<int>(args.size());
  const int last = spec.last_key < 0 ? argc + spec.last_key : spec.last_key;
  for (int i = spec.first_key; i <= last && i < argc; i += spec.key_step) positions->push_back(i);
}

}  // namespace sluice::server
