#include "server/core/acl_registry.h"

#include <algorithm>

#include "server/core/command.h"

namespace sluice::server {

namespace {

constexpr size_t kLogMaxLen = 128;            // Redis's acllog-max-len default
constexpr int64_t kLogGroupingMs = 60000;     // Redis's ACL_LOG_GROUPING_MAX_TIME_DELTA
constexpr size_t kLogScanForDuplicates = 10;  // Redis looks at the 10 newest entries

std::shared_ptr<AclUser> NewDefaultUser() {
  auto user = std::make_shared<AclUser>("default");
  AclSelector& root = user->selectors.front();
  root.all_commands = root.future_commands = true;  // every bit, without knowing the table
  root.all_keys = root.all_channels = true;
  user->enabled = true;
  user->nopass = true;
  return user;
}

// Compares every byte whatever the first difference (Redis's time_independent_strcmp).
bool SameHash(std::string_view a, std::string_view b) {
  unsigned diff = a.size() != b.size() ? 1u : 0u;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  }
  return diff == 0;
}

}  // namespace

AclRegistry::AclRegistry() {
  users_.emplace("default", NewDefaultUser());
  PublishLocked();
}

void AclRegistry::PublishLocked() {
  auto it = users_.find("default");
  const AclUser& d = *it->second;
  auth_required_.store(!d.nopass || !d.enabled, std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_acq_rel);
}

AclRegistry::UserPtr AclRegistry::Find(std::string_view name) const {
  std::lock_guard lock(mu_);
  auto it = users_.find(name);
  return it == users_.end() ? nullptr : it->second;
}

std::vector<AclRegistry::UserPtr> AclRegistry::Users() const {
  std::lock_guard lock(mu_);
  std::vector<UserPtr> out;
  for (const auto& [name, user] : users_) out.push_back(user);
  return out;
}

std::string AclRegistry::SetUser(std::string_view name, const std::vector<std::string>& rules,
                                 const CommandTable& table) {
  std::lock_guard lock(mu_);
  auto it = users_.find(name);
  AclUser user = it == users_.end() ? AclUser(std::string(name)) : *it->second;
  std::string error = ApplyAclRules(user, rules, table);
  if (!error.empty()) return error;
  users_[std::string(name)] = std::make_shared<const AclUser>(std::move(user));
  PublishLocked();
  return "";
}

std::vector<std::string> AclRegistry::DelUsers(const std::vector<std::string>& names) {
  std::lock_guard lock(mu_);
  std::vector<std::string> deleted;
  for (const std::string& name : names) {
    if (name != "default" && users_.erase(name) > 0) deleted.push_back(name);
  }
  if (!deleted.empty()) PublishLocked();
  return deleted;
}

void AclRegistry::SetDefaultPassword(std::string_view password) {
  std::lock_guard lock(mu_);
  auto user = std::make_shared<AclUser>(*users_.at("default"));
  user->passwords.clear();
  user->nopass = password.empty();
  if (!password.empty()) user->passwords.push_back(AclHashPassword(password));
  users_["default"] = std::move(user);
  PublishLocked();
}

AclRegistry::UserPtr AclRegistry::Authenticate(std::string_view name,
                                               std::string_view password) const {
  UserPtr user = Find(name);
  if (user == nullptr || !user->enabled) return nullptr;
  if (user->nopass) return user;
  const std::string hash = AclHashPassword(password);
  bool match = false;
  for (const std::string& p : user->passwords) match |= SameHash(p, hash);
  return match ? user : nullptr;
}

std::string AclRegistry::ReplaceAll(const std::vector<std::vector<std::string>>& users,
                                    const CommandTable& table, std::string_view source,
                                    std::vector<std::string>* changed) {
  std::map<std::string, UserPtr, std::less<>> fresh;
  for (size_t i = 0; i < users.size(); ++i) {
    const std::vector<std::string>& line = users[i];
    const std::string where = std::string(source) + ":" + std::to_string(i + 1) + ": ";
    if (line.empty() || AclHasSpaces(line[0])) {
      return where + "Usernames can't contain spaces or null characters";
    }
    if (fresh.count(line[0]) > 0) return where + "Duplicate user '" + line[0] + "' found";
    AclUser user(line[0]);
    if (line[0] == "default") user = *NewDefaultUser();
    const std::string error =
        ApplyAclRules(user, std::vector<std::string>(line.begin() + 1, line.end()), table);
    if (!error.empty()) return where + error;
    fresh.emplace(line[0], std::make_shared<const AclUser>(std::move(user)));
  }
  if (fresh.count("default") == 0) fresh.emplace("default", NewDefaultUser());
  std::lock_guard lock(mu_);
  // As Redis: every other user's connections close; the default user's stay (its object is
  // updated in place there).
  for (const auto& [name, user] : users_) {
    if (name != "default") changed->push_back(name);
  }
  users_ = std::move(fresh);
  PublishLocked();
  return "";
}

void AclRegistry::Log(AclLogEntry entry) {
  std::lock_guard lock(mu_);
  const size_t scan = std::min(log_.size(), kLogScanForDuplicates);
  for (size_t i = 0; i < scan; ++i) {
    AclLogEntry& e = log_[i];
    if (e.reason != entry.reason || e.context != entry.context || e.object != entry.object ||
        e.username != entry.username ||
        std::abs(e.created_ms - entry.created_ms) > kLogGroupingMs) {
      continue;
    }
    entry.count = e.count + 1;
    log_.erase(log_.begin() + static_cast<std::ptrdiff_t>(i));
    break;
  }
  log_.push_front(std::move(entry));
  while (log_.size() > kLogMaxLen) log_.pop_back();
}

std::vector<AclLogEntry> AclRegistry::LogEntries(size_t count) const {
  std::lock_guard lock(mu_);
  count = std::min(count, log_.size());
  return std::vector<AclLogEntry>(log_.begin(), log_.begin() + static_cast<std::ptrdiff_t>(count));
}

void AclRegistry::ResetLog() {
  std::lock_guard lock(mu_);
  log_.clear();
}

std::string AclFileText(const std::vector<AclRegistry::UserPtr>& users, const CommandTable& table) {
  std::string text;
  for (const auto& user : users) {
    text += "user " + user->name + " " + DescribeAclUser(*user, table) + "\n";
  }
  return text;
}

std::string ParseAclFileText(std::string_view text, std::string_view source,
                             std::vector<std::vector<std::string>>* users) {
  size_t line_no = 0;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    ++line_no;
    const std::vector<std::string_view> words = AclSplitWords(line);
    if (words.empty() || words[0][0] == '#') continue;
    const std::string where = std::string(source) + ":" + std::to_string(line_no) + ": ";
    if (words[0] != "user" || words.size() < 2) {
      return where + "should start with user keyword";
    }
    users->emplace_back(words.begin() + 1, words.end());
  }
  return "";
}

}  // namespace sluice::server
