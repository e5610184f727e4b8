#include "server/core/redaction.h"

#include <string_view>

#include "server/core/args.h"

namespace sluice::server {

namespace {

// HELLO [protover [AUTH username password] [SETNAME name]]: options from the third argument on.
bool HelloSecret(Args args, size_t i) {
  for (size_t j = 2; j < args.size(); ++j) {
    const size_t more = args.size() - 1 - j;
    if (EqualsIgnoreCase(args[j], "auth") && more >= 2) {
      if (i == j + 1 || i == j + 2) return true;
      j += 2;
    } else if (EqualsIgnoreCase(args[j], "setname") && more >= 1) {
      j += 1;
    } else {
      return false;
    }
  }
  return false;
}

bool SensitiveConfig(std::string_view name) {
  return EqualsIgnoreCase(name, "masteruser") || EqualsIgnoreCase(name, "masterauth") ||
         EqualsIgnoreCase(name, "requirepass");
}

// MIGRATE host port key|"" db timeout [COPY] [REPLACE] [AUTH password | AUTH2 user password]
// [KEYS key ...]: options from the sixth argument on, read as Redis reads them.
bool MigrateSecret(Args args, size_t i) {
  for (size_t j = 6; j < args.size(); ++j) {
    const size_t more = args.size() - 1 - j;
    if (EqualsIgnoreCase(args[j], "auth")) {
      if (more < 1) return false;
      if (i == j + 1) return true;
      j += 1;
    } else if (EqualsIgnoreCase(args[j], "auth2")) {
      if (more < 2) return false;
      if (i == j + 1 || i == j + 2) return true;
      j += 2;
    } else if (EqualsIgnoreCase(args[j], "keys")) {
      return false;
    }
  }
  return false;
}

}  // namespace

bool RedactedArgument(Args args, size_t i) {
  if (i == 0 || i >= args.size()) return false;
  const std::string_view name = args[0];
  if (EqualsIgnoreCase(name, "auth")) return true;
  if (EqualsIgnoreCase(name, "hello")) return HelloSecret(args, i);
  if (EqualsIgnoreCase(name, "acl")) {
    return args.size() >= 3 && EqualsIgnoreCase(args[1], "setuser") && i >= 2;
  }
  if (EqualsIgnoreCase(name, "config")) {
    if (args.size() < 4 || args.size() % 2 != 0 || !EqualsIgnoreCase(args[1], "set")) {
      return false;
    }
    return i >= 3 && i % 2 == 1 && SensitiveConfig(args[i - 1]);
  }
  if (EqualsIgnoreCase(name, "migrate")) return MigrateSecret(args, i);
  return false;
}

}  // namespace sluice::server
