// The ACL users and the ACL log (Redis 7.0's ACL subsystem), shared by every connection.
// Users are immutable snapshots (shared_ptr<const AclUser>): a change publishes a new snapshot
// and bumps generation(); a connection re-reads its user when the generation moved (one relaxed
// atomic load per command on the gate's path, no lock). Thread-safe: every method may be called
// from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "server/core/acl_user.h"
#include "server/core/errors.h"

namespace sluice::server {

class CommandTable;

// One ACL LOG entry (entries that match in reason, context, object and user within 60 s are
// counted as one, as in Redis).
struct AclLogEntry {
  int64_t count = 1;
  AclDenial reason = AclDenial::kCommand;  // kNone here means "auth"
  std::string context;                     // "toplevel", "multi", "lua"
  std::string object;                      // the command, key or user name
  std::string username;
  int64_t created_ms = 0;  // last update
  std::string client_info;
};

class AclRegistry {
 public:
  using UserPtr = std::shared_ptr<const AclUser>;

  AclRegistry();  // only "default": on, nopass, every command, key and channel

  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  // True when a new connection is not yet authenticated: the default user has a password
  // (or is off). Lock-free.
  bool auth_required() const { return auth_required_.load(std::memory_order_acquire); }

  UserPtr Find(std::string_view name) const;  // nullptr when there is no such user
  UserPtr default_user() const { return Find("default"); }
  std::vector<UserPtr> Users() const;  // sorted by name

  // ACL SETUSER: creates the user when missing. Returns "" or Redis's error text (no "ERR ").
  std::string SetUser(std::string_view name, const std::vector<std::string>& rules,
                      const CommandTable& table);
  // ACL DELUSER (never "default"): the names that existed and are gone now.
  std::vector<std::string> DelUsers(const std::vector<std::string>& names);
  // requirepass: the default user's passwords become this one (empty: nopass), as Redis does.
  void SetDefaultPassword(std::string_view password);

  // AUTH: the user when it exists, is on and the password matches (any password for nopass).
  UserPtr Authenticate(std::string_view name, std::string_view password) const;

  // Replaces every user with `users` (name, rules), validated against `table` first: nothing
  // changes on an error, which names the line ("<source>:<n>: ..."). "default" is created as
  // at startup when the list lacks it. The names of the users replaced, except "default", go to
  // *changed (their connections are to be closed).
  std::string ReplaceAll(const std::vector<std::vector<std::string>>& users,
                         const CommandTable& table, std::string_view source,
                         std::vector<std::string>* changed);

  void Log(AclLogEntry entry);
  std::vector<AclLogEntry> LogEntries(size_t count) const;  // newest first
  void ResetLog();

 private:
  void PublishLocked();

  mutable std::mutex mu_;
  std::map<std::string, UserPtr, std::less<>> users_;
  std::deque<AclLogEntry> log_;
  std::atomic<uint64_t> generation_{1};
  std::atomic<bool> auth_required_{false};
};

// The text of an ACL file or ACL LIST ("user <name> <rules>" lines) for `users`.
std::string AclFileText(const std::vector<AclRegistry::UserPtr>& users, const CommandTable& table);
// Parses an ACL file's text into (name, rules...) lists; an error names the line.
std::string ParseAclFileText(std::string_view text, std::string_view source,
                             std::vector<std::vector<std::string>>* users);

}  // namespace sluice::server
