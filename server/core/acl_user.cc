#include "server/core/acl_user.h"

#include <openssl/sha.h>

#include <algorithm>
#include <cctype>
#include <climits>

#include "server/core/acl_categories.h"
#include "server/core/args.h"
#include "server/core/command.h"

namespace sluice::server {

namespace {

bool IsPasswordHash(std::string_view hash) {
  return hash.size() == 64 && std::all_of(hash.begin(), hash.end(), [](char c) {
           return (c >= 'a' && c <= 'f') || (c >= '0' && c <= '9');
         });
}

}  // namespace

bool IsAclContainer(const CommandSpec& spec) { return spec.handler == nullptr; }

// Redis's ACLChangeSelectorPerm: a command, and a container's every subcommand.
void ChangeAclPerm(AclSelector& s, const CommandSpec& spec, const CommandTable& table, bool allow) {
  s.SetBit(spec.id, allow);
  std::erase_if(s.first_args, [&](const auto& e) { return e.first == spec.id; });
  if (!IsAclContainer(spec)) return;
  const std::string prefix = spec.name + "|";
  for (const CommandSpec& sub : table.all()) {
    if (sub.name.starts_with(prefix)) s.SetBit(sub.id, allow);
  }
}

void SetAllAclCommands(AclSelector& s, const CommandTable& table, bool allow) {
  s.allowed.assign((table.all().size() + 63) / 64, allow ? ~uint64_t{0} : 0);
  s.all_commands = allow;
  s.future_commands = allow;
  s.first_args.clear();
}

void SetAclCategory(AclSelector& s, uint32_t category, const CommandTable& table, bool allow) {
  for (const CommandSpec& spec : table.all()) {
    if (spec.acl_categories & category) ChangeAclPerm(s, spec, table, allow);
  }
}

namespace {

AclRuleError AddKeyPattern(AclSelector& s, std::string_view op) {
  if (s.all_keys) return AclRuleError::kKeysAfterAll;
  uint8_t perms = 0;
  size_t offset = 1;
  if (op[0] == '%') {
    for (; offset < op.size(); ++offset) {
      const char c = static_cast<char>(std::toupper(static_cast<unsigned char>(op[offset])));
      if (c == 'R' && !(perms & kAclKeyRead)) {
        perms |= kAclKeyRead;
      } else if (c == 'W' && !(perms & kAclKeyWrite)) {
        perms |= kAclKeyWrite;
      } else if (op[offset] == '~') {
        ++offset;
        break;
      } else {
        return AclRuleError::kSyntax;
      }
    }
  } else {
    perms = kAclKeyAll;
  }
  const std::string_view pattern = op.substr(std::min(offset, op.size()));
  if (AclHasSpaces(pattern)) return AclRuleError::kSyntax;
  auto it = std::find_if(s.keys.begin(), s.keys.end(),
                         [&](const AclKeyPattern& k) { return k.pattern == pattern; });
  if (it == s.keys.end()) {
    s.keys.push_back(AclKeyPattern{std::string(pattern), perms});
  } else {
    it->perms |= perms;
  }
  return AclRuleError::kNone;
}

AclRuleError AddChannelPattern(AclSelector& s, std::string_view op) {
  if (s.all_channels) return AclRuleError::kChannelsAfterAll;
  const std::string_view pattern = op.substr(1);
  if (AclHasSpaces(pattern)) return AclRuleError::kSyntax;
  if (std::find(s.channels.begin(), s.channels.end(), pattern) == s.channels.end()) {
    s.channels.emplace_back(pattern);
  }
  return AclRuleError::kNone;
}

// "+name" or "+container|sub" or "+command|first-arg".
AclRuleError AllowCommand(AclSelector& s, std::string_view name, const CommandTable& table) {
  const size_t bar = name.rfind('|');
  if (bar == std::string_view::npos) {
    const CommandSpec* spec = table.Find(name);
    if (spec == nullptr) return AclRuleError::kUnknownCommand;
    ChangeAclPerm(s, *spec, table, true);
    return AclRuleError::kNone;
  }
  const CommandSpec* parent = table.Find(name.substr(0, bar));
  if (parent == nullptr) return AclRuleError::kUnknownCommand;
  if (parent->name.find('|') != std::string::npos) return AclRuleError::kFirstArgOfSub;
  const std::string_view arg = name.substr(bar + 1);
  if (arg.empty()) return AclRuleError::kSyntax;
  if (IsAclContainer(*parent)) {
    const CommandSpec* sub = table.Find(name);
    if (sub == nullptr) return AclRuleError::kUnknownCommand;
    ChangeAclPerm(s, *sub, table, true);
    return AclRuleError::kNone;
  }
  auto it = std::find_if(s.first_args.begin(), s.first_args.end(),
                         [&](const auto& e) { return e.first == parent->id; });
  if (it == s.first_args.end()) it = s.first_args.insert(s.first_args.end(), {parent->id, {}});
  for (const std::string& a : it->second) {
    if (EqualsIgnoreCase(a, arg)) return AclRuleError::kNone;
  }
  it->second.emplace_back(arg);
  return AclRuleError::kNone;
}

// Redis's ACLSetSelector: the rules a selector understands.
AclRuleError ApplySelectorRule(AclSelector& s, std::string_view op, const CommandTable& table) {
  if (EqualsIgnoreCase(op, "allkeys") || op == "~*") {
    s.all_keys = true;
    s.keys.clear();
  } else if (EqualsIgnoreCase(op, "resetkeys")) {
    s.all_keys = false;
    s.keys.clear();
  } else if (EqualsIgnoreCase(op, "allchannels") || op == "&*") {
    s.all_channels = true;
    s.channels.clear();
  } else if (EqualsIgnoreCase(op, "resetchannels")) {
    s.all_channels = false;
    s.channels.clear();
  } else if (EqualsIgnoreCase(op, "allcommands") || EqualsIgnoreCase(op, "+@all")) {
    SetAllAclCommands(s, table, true);
  } else if (EqualsIgnoreCase(op, "nocommands") || EqualsIgnoreCase(op, "-@all")) {
    SetAllAclCommands(s, table, false);
  } else if (op[0] == '~' || op[0] == '%') {
    return AddKeyPattern(s, op);
  } else if (op[0] == '&') {
    return AddChannelPattern(s, op);
  } else if (op[0] == '+' && (op.size() < 2 || op[1] != '@')) {
    return AllowCommand(s, op.substr(1), table);
  } else if (op[0] == '-' && (op.size() < 2 || op[1] != '@')) {
    const CommandSpec* spec = table.Find(op.substr(1));
    if (spec == nullptr) return AclRuleError::kUnknownCommand;
    ChangeAclPerm(s, *spec, table, false);
  } else if (op[0] == '+' || op[0] == '-') {
    const std::optional<uint32_t> category = AclCategoryByName(op.substr(2));
    if (!category) return AclRuleError::kUnknownCommand;
    SetAclCategory(s, *category, table, op[0] == '+');
  } else {
    return AclRuleError::kSyntax;
  }
  return AclRuleError::kNone;
}

AclRuleError AddSelector(AclUser& user, std::string_view op, const CommandTable& table) {
  AclSelector selector;
  for (std::string_view word : AclSplitWords(op.substr(1, op.size() - 2))) {
    const AclRuleError e = ApplySelectorRule(selector, word, table);
    if (e != AclRuleError::kNone) return e;
  }
  user.selectors.push_back(std::move(selector));
  return AclRuleError::kNone;
}

// ">pass" / "<pass" hash the password; "#hash" / "!hash" must already be one.
AclRuleError PasswordHashOf(std::string_view op, std::string* hash) {
  if (op[0] == '>' || op[0] == '<') {
    *hash = AclHashPassword(op.substr(1));
    return AclRuleError::kNone;
  }
  if (!IsPasswordHash(op.substr(1))) return AclRuleError::kBadHash;
  *hash = op.substr(1);
  return AclRuleError::kNone;
}

AclRuleError AddPassword(AclUser& user, std::string_view op) {
  std::string hash;
  if (PasswordHashOf(op, &hash) != AclRuleError::kNone) return AclRuleError::kBadHash;
  if (std::find(user.passwords.begin(), user.passwords.end(), hash) == user.passwords.end()) {
    user.passwords.push_back(std::move(hash));
  }
  user.nopass = false;
  return AclRuleError::kNone;
}

AclRuleError RemovePassword(AclUser& user, std::string_view op) {
  std::string hash;
  if (PasswordHashOf(op, &hash) != AclRuleError::kNone) return AclRuleError::kBadHash;
  auto it = std::find(user.passwords.begin(), user.passwords.end(), hash);
  if (it == user.passwords.end()) return AclRuleError::kNoSuchPassword;
  user.passwords.erase(it);
  return AclRuleError::kNone;
}

}  // namespace

void AclSelector::SetBit(size_t id, bool value) {
  const size_t word = id >> 6;
  if (word >= allowed.size()) allowed.resize(word + 1, future_commands ? ~uint64_t{0} : 0);
  const uint64_t bit = uint64_t{1} << (id & 63);
  if (value) {
    allowed[word] |= bit;
  } else {
    allowed[word] &= ~bit;
    all_commands = false;
  }
}

bool AclHasSpaces(std::string_view s) {
  return std::any_of(s.begin(), s.end(),
                     [](char c) { return std::isspace(static_cast<unsigned char>(c)) || c == 0; });
}

std::vector<std::string_view> AclSplitWords(std::string_view s) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    size_t j = i;
    while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
    if (j > i) words.push_back(s.substr(i, j - i));
    i = j;
  }
  return words;
}

AclUser::AclUser(std::string user_name) : name(std::move(user_name)) { selectors.emplace_back(); }

std::string AclHashPassword(std::string_view password) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(password.data()), password.size(), digest);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * SHA256_DIGEST_LENGTH);
  for (unsigned char b : digest) {
    hex += kHex[b >> 4];
    hex += kHex[b & 15];
  }
  return hex;
}

AclRuleError ApplyAclRule(AclUser& user, std::string_view op, const CommandTable& table) {
  if (op.empty()) return AclRuleError::kNone;
  if (EqualsIgnoreCase(op, "on")) {
    user.enabled = true;
  } else if (EqualsIgnoreCase(op, "off")) {
    user.enabled = false;
  } else if (EqualsIgnoreCase(op, "skip-sanitize-payload")) {
    user.sanitize = AclUser::Sanitize::kSkip;
  } else if (EqualsIgnoreCase(op, "sanitize-payload")) {
    user.sanitize = AclUser::Sanitize::kSanitize;
  } else if (EqualsIgnoreCase(op, "nopass")) {
    user.nopass = true;
    user.passwords.clear();
  } else if (EqualsIgnoreCase(op, "resetpass")) {
    user.nopass = false;
    user.passwords.clear();
  } else if (op[0] == '>' || op[0] == '#') {
    return AddPassword(user, op);
  } else if (op[0] == '<' || op[0] == '!') {
    return RemovePassword(user, op);
  } else if (op[0] == '(' && op.back() == ')') {
    return AddSelector(user, op, table);
  } else if (EqualsIgnoreCase(op, "clearselectors")) {
    user.selectors.resize(1);
  } else if (EqualsIgnoreCase(op, "reset")) {
    user.nopass = false;
    user.passwords.clear();
    user.enabled = false;
    user.sanitize = AclUser::Sanitize::kSanitize;
    user.selectors.resize(1);
    AclSelector& root = user.selectors.front();
    root = AclSelector{};
    SetAllAclCommands(root, table, false);
  } else {
    return ApplySelectorRule(user.selectors.front(), op, table);
  }
  return AclRuleError::kNone;
}

}  // namespace sluice::server
