// ACL SETUSER's rule lists and the descriptions ACL LIST and ACL GETUSER show (acl_user.h).
#include <algorithm>
#include <array>
#include <climits>

#include "server/core/acl_categories.h"
#include "server/core/acl_user.h"
#include "server/core/command.h"
#include "server/core/errors.h"

namespace sluice::server {

namespace {

// Redis's ACLMergeSelectorArguments: "(~a" "+get)" become one rule "(~a +get)". Returns false,
// with the opening word's index in *unmatched, when a parenthesis is never closed.
bool MergeSelectorWords(const std::vector<std::string>& words, std::vector<std::string>* merged,
                        size_t* unmatched) {
  bool open = false;
  for (size_t j = 0; j < words.size(); ++j) {
    const std::string& w = words[j];
    if (!open && !w.empty() && w.front() == '(' && w.back() != ')') {
      merged->push_back(w);
      open = true;
      *unmatched = j;
      continue;
    }
    if (open) {
      merged->back() += ' ';
      merged->back() += w;
      if (!w.empty() && w.back() == ')') open = false;
      continue;
    }
    merged->push_back(w);
  }
  return !open;
}

void AppendOp(std::string& rules, char sign, std::string_view name) {
  rules += sign;
  rules += name;
  rules += ' ';
}

// One command's difference between the user's selector and the description so far.
void DescribeOne(const AclSelector& s, AclSelector& fake, const CommandSpec& spec,
                 const CommandTable& table, std::string& rules) {
  const bool user_bit = s.Allows(spec.id);
  if (user_bit != fake.Allows(spec.id)) {
    AppendOp(rules, user_bit ? '+' : '-', spec.name);
    ChangeAclPerm(fake, spec, table, user_bit);
  }
  if (user_bit) return;
  for (const auto& [id, args] : s.first_args) {
    if (id != spec.id) continue;
    for (const std::string& a : args) AppendOp(rules, '+', spec.name + "|" + a);
  }
}

// The category that best fits the bits still to describe (Redis's ACLDescribeSelectorCommandRules
// loop): more commands in common than different, the fewest differences, then the most common.
int BestCategory(const AclSelector& temp, const CommandTable& table, bool additive,
                 const std::array<bool, 32>& applied) {
  int best = -1;
  size_t min_diff = INT_MAX, max_same = 0;
  const size_t count = AclCategoryNames().size();
  for (size_t j = 0; j < count; ++j) {
    if (applied[j]) continue;
    size_t on = 0, off = 0;
    for (const CommandSpec& spec : table.all()) {
      if (!(spec.acl_categories & (1u << j))) continue;
      (temp.Allows(spec.id) ? on : off)++;
    }
    const size_t diff = additive ? off : on, same = additive ? on : off;
    if (same > diff && (diff < min_diff || (diff == min_diff && same > max_same))) {
      best = static_cast<int>(j);
      min_diff = diff;
      max_same = same;
    }
  }
  return best;
}

std::string KeyPatternString(const AclKeyPattern& k) {
  switch (k.perms) {
    case kAclKeyAll:
      return "~" + k.pattern;
    case kAclKeyRead:
      return "%R~" + k.pattern;
    case kAclKeyWrite:
      return "%W~" + k.pattern;
    default:
      return "%~" + k.pattern;
  }
}

}  // namespace

std::string ApplyAclRules(AclUser& user, const std::vector<std::string>& words,
                          const CommandTable& table) {
  std::vector<std::string> rules;
  size_t unmatched = 0;
  if (!MergeSelectorWords(words, &rules, &unmatched)) {
    return "Unmatched parenthesis in acl selector starting at '" + words[unmatched] + "'.";
  }
  AclUser copy = user;
  for (const std::string& rule : rules) {
    const AclRuleError e = ApplyAclRule(copy, rule, table);
    if (e != AclRuleError::kNone) {
      return "Error in ACL SETUSER modifier '" + rule + "': " + std::string(AclRuleErrorText(e));
    }
  }
  user = std::move(copy);
  return "";
}

std::string DescribeAclCommands(const AclSelector& s, const CommandTable& table) {
  const bool additive = !s.future_commands;
  std::string rules = additive ? "-@all " : "+@all ";
  AclSelector fake;
  SetAllAclCommands(fake, table, !additive);
  AclSelector temp;
  temp.allowed = s.allowed;
  temp.future_commands = s.future_commands;
  std::array<bool, 32> applied{};
  for (int best; (best = BestCategory(temp, table, additive, applied)) >= 0;) {
    const uint32_t bit = 1u << best;
    SetAclCategory(fake, bit, table, additive);
    SetAclCategory(temp, bit, table, !additive);
    AppendOp(rules, additive ? '+' : '-', "@" + std::string(AclCategoryNames()[best]));
    applied[static_cast<size_t>(best)] = true;
  }
  // Containers first, each followed by its subcommands, as Redis walks its command dict.
  for (const CommandSpec& spec : table.all()) {
    if (spec.name.find('|') != std::string::npos) continue;
    DescribeOne(s, fake, spec, table, rules);
    if (!IsAclContainer(spec)) continue;
    const std::string prefix = spec.name + "|";
    for (const CommandSpec& sub : table.all()) {
      if (sub.name.starts_with(prefix)) DescribeOne(s, fake, sub, table, rules);
    }
  }
  rules.pop_back();
  return rules;
}

std::string DescribeAclKeys(const AclSelector& s) {
  if (s.all_keys) return "~*";
  std::string out;
  for (const AclKeyPattern& k : s.keys) {
    if (!out.empty()) out += ' ';
    out += KeyPatternString(k);
  }
  return out;
}

std::string DescribeAclChannels(const AclSelector& s) {
  if (s.all_channels) return "&*";
  std::string out;
  for (const std::string& c : s.channels) {
    if (!out.empty()) out += ' ';
    out += "&" + c;
  }
  return out;
}

namespace {

// Redis's ACLDescribeSelector: keys, channels (with "resetchannels" when not all), commands.
std::string DescribeSelector(const AclSelector& s, const CommandTable& table) {
  std::string out;
  if (s.all_keys) {
    out += "~* ";
  } else {
    for (const AclKeyPattern& k : s.keys) out += KeyPatternString(k) + " ";
  }
  if (s.all_channels) {
    out += "&* ";
  } else {
    out += "resetchannels ";
    for (const std::string& c : s.channels) out += "&" + c + " ";
  }
  return out + DescribeAclCommands(s, table);
}

}  // namespace

std::string DescribeAclUser(const AclUser& user, const CommandTable& table) {
  std::string out = user.enabled ? "on " : "off ";
  if (user.nopass) out += "nopass ";
  if (user.sanitize == AclUser::Sanitize::kSkip) out += "skip-sanitize-payload ";
  if (user.sanitize == AclUser::Sanitize::kSanitize) out += "sanitize-payload ";
  for (const std::string& p : user.passwords) out += "#" + p + " ";
  out += DescribeSelector(user.selectors.front(), table);
  for (size_t i = 1; i < user.selectors.size(); ++i) {
    out += " (" + DescribeSelector(user.selectors[i], table) + ")";
  }
  return out;
}

}  // namespace sluice::server
