// ACL command categories (@read, @write, @dangerous, ...): Redis 7.0's twenty-one, in Redis's
// order, plus Sluice's own @ratelimit for the limiter commands. Each command carries its set as
// a bitmask (CommandSpec::acl_categories), filled by CommandTable::Add from AclCategoriesOf.
// Pure functions over immutable data: thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace sluice::server {

struct CommandSpec;

// One bit per category; the bit's index is the category's position in AclCategoryNames().
enum AclCategory : uint32_t {
  kAclKeyspace = 1u << 0,
  kAclRead = 1u << 1,
  kAclWrite = 1u << 2,
  kAclSet = 1u << 3,
  kAclSortedSet = 1u << 4,
  kAclList = 1u << 5,
  kAclHash = 1u << 6,
  kAclString = 1u << 7,
  kAclBitmap = 1u << 8,
  kAclHyperLogLog = 1u << 9,
  kAclGeo = 1u << 10,
  kAclStream = 1u << 11,
  kAclPubSub = 1u << 12,
  kAclAdmin = 1u << 13,
  kAclFast = 1u << 14,
  kAclSlow = 1u << 15,
  kAclBlocking = 1u << 16,
  kAclDangerous = 1u << 17,
  kAclConnection = 1u << 18,
  kAclTransaction = 1u << 19,
  kAclScripting = 1u << 20,
  kAclRateLimit = 1u << 21,  // Sluice's own: every limiter command
};

// The category names without '@', in bit order (ACL CAT's reply).
std::span<const std::string_view> AclCategoryNames();

// The bit of a category name (case-insensitive, without '@'); nullopt when unknown.
std::optional<uint32_t> AclCategoryByName(std::string_view name);

// A command's categories. For a command Redis 7.0.15 has, exactly Redis's set (by name,
// "config|get" for subcommands). For any other command they follow from its flags as Redis
// derives them (write, read, admin -> admin+dangerous, fast else slow, blocking) plus its
// group's category ("rate-limit" -> @ratelimit, "string" -> @string, ...). A command in no known
// group that is neither read nor write also gets @dangerous: a command added without thought
// for ACLs is refused to users that deny @dangerous, never granted by accident.
uint32_t AclCategoriesOf(const CommandSpec& spec);

}  // namespace sluice::server
