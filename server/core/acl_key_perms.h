// The permissions (read, write, both or neither) each key of a command needs under ACL key
// patterns (%R~, %W~, ~), as Redis 7.0.15's key specifications give them: ACCESS -> read;
// INSERT, DELETE, UPDATE -> write. Filled into CommandSpec by CommandTable::Add.
#pragma once

#include <array>
#include <cstdint>

namespace sluice::server {

struct CommandSpec;

struct AclKeyPerms {
  uint8_t count = 0;  // 0: the default below
  // Key i needs perms[min(i, count - 1)] (AclKeyPerm bits, server/core/acl_user.h).
  std::array<uint8_t, 4> perms{};
};

// Redis's table where it differs from the default; the default for any other command: read and
// write for a command that may write (or is neither read-only nor write), read for a read-only
// one.
AclKeyPerms AclKeyPermsOf(const CommandSpec& spec);

}  // namespace sluice::server
