// ACL users as Redis 7.0 has them: flags (on/off, nopass, sanitize-payload), SHA-256 password
// hashes, and selectors (the root one plus any `(...)`), each with a command bitmap indexed by
// CommandSpec::id, first-arg exceptions (`+select|0`), key patterns (`~`, `%R~`, `%W~`) and
// channel patterns (`&`). Rules are applied with ApplyAclRule against one CommandTable (the
// server's; its ids index the bitmaps). An AclUser is a value: the registry
// (server/core/acl_registry.h) shares immutable snapshots of it with connections.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::server {

class CommandTable;
struct CommandSpec;

enum AclKeyPerm : uint8_t { kAclKeyRead = 1, kAclKeyWrite = 2, kAclKeyAll = 3 };

struct AclKeyPattern {
  std::string pattern;
  uint8_t perms = kAclKeyAll;
};

struct AclSelector {
  bool all_keys = false;
  bool all_channels = false;
  // Every command, with no exception since: the gate's cheap case. Cleared by any removal.
  bool all_commands = false;
  // Redis's reserved command bit: set by +@all (and cleared only by -@all). A selector started
  // from +@all also allows commands the bitmap does not cover, and describes itself from +@all.
  bool future_commands = false;
  std::vector<uint64_t> allowed;  // bit CommandSpec::id; words past the end read as 0
  std::vector<std::pair<size_t, std::vector<std::string>>> first_args;  // id -> allowed args[1]
  std::vector<AclKeyPattern> keys;
  std::vector<std::string> channels;

  bool Allows(size_t id) const {
    const size_t word = id >> 6;
    if (word >= allowed.size()) return future_commands;
    return (allowed[word] >> (id & 63)) & 1;
  }
  void SetBit(size_t id, bool value);
};

struct AclUser {
  std::string name;
  bool enabled = false;
  bool nopass = false;
  // Neither flag until a rule sets one ("reset" sets sanitize-payload), as in Redis.
  enum class Sanitize : uint8_t { kUnset, kSanitize, kSkip } sanitize = Sanitize::kUnset;
  std::vector<std::string> passwords;  // lower-case hex SHA-256, in the order added
  std::vector<AclSelector> selectors;  // [0] is the root selector; never empty

  explicit AclUser(std::string user_name);
  // Every command on every key and channel from the root selector: the gate skips its checks.
  bool Unrestricted() const {
    const AclSelector& root = selectors.front();
    return root.all_commands && root.all_keys && root.all_channels;
  }
};

// Why a rule was refused; AclRuleErrorText gives Redis's message for each.
enum class AclRuleError : int {
  kNone,
  kSyntax,            // EINVAL
  kUnknownCommand,    // ENOENT
  kKeysAfterAll,      // EEXIST
  kChannelsAfterAll,  // EISDIR
  kNoSuchPassword,    // ENODEV
  kBadHash,           // EBADMSG
  kFirstArgOfSub,     // ECHILD
};

// Applies one rule ("on", ">pass", "~key:*", "+@read", "(~a +get)", "reset", ...) to `user`.
// On error `user` may be partly changed: apply a list of rules to a copy (ApplyAclRules).
AclRuleError ApplyAclRule(AclUser& user, std::string_view rule, const CommandTable& table);

// Redis's ACL SETUSER: joins rules split inside parentheses ("(~a" "+get)"), applies each to a
// copy of `user` and, when all succeed, stores the copy in `user`. Returns "" or the error text
// without its "ERR " ("Error in ACL SETUSER modifier '...': ...", "Unmatched parenthesis ...").
std::string ApplyAclRules(AclUser& user, const std::vector<std::string>& rules,
                          const CommandTable& table);

// Lower-case hex SHA-256 of a password, as ACL GETUSER shows it.
std::string AclHashPassword(std::string_view password);

// ACL LIST's description ("on #<hash> ~* &* +@all"), without "user <name> ".
std::string DescribeAclUser(const AclUser& user, const CommandTable& table);
// One selector's parts, as ACL GETUSER shows them.
std::string DescribeAclCommands(const AclSelector& selector, const CommandTable& table);
std::string DescribeAclKeys(const AclSelector& selector);
std::string DescribeAclChannels(const AclSelector& selector);

}  // namespace sluice::server

namespace sluice::server {

// Shared by the rule parser, the describer and the registry.
// White space or a NUL byte: refused in user names and patterns, as Redis does.
bool AclHasSpaces(std::string_view s);
// Splits on white space (a selector's inside, an ACL file line).
std::vector<std::string_view> AclSplitWords(std::string_view s);
bool IsAclContainer(const CommandSpec& spec);
void ChangeAclPerm(AclSelector& s, const CommandSpec& spec, const CommandTable& table, bool allow);
void SetAllAclCommands(AclSelector& s, const CommandTable& table, bool allow);
void SetAclCategory(AclSelector& s, uint32_t category, const CommandTable& table, bool allow);

}  // namespace sluice::server
