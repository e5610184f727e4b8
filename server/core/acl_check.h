// The ACL check the gate (dispatcher.cc), EXEC and redis.call run before a command: may this
// client's user run this command on these keys? Cheap on the hot path: one atomic load to see
// whether the users changed, then an unrestricted user (the default user unless restricted)
// passes at once; a restricted one costs a bit test on CommandSpec::id and a glob per key.
// Called on the client's own thread.
#pragma once

#include <string_view>

#include "server/core/acl_user.h"
#include "server/core/command.h"
#include "server/core/errors.h"

namespace sluice::server {

struct AclVerdict {
  AclDenial denial = AclDenial::kNone;
  int pos = 0;  // the argument refused (a key), when denial is kKey
};

// Redis's ACLCheckAllUserCommandPerm: allowed when any selector allows the command and all its
// keys; else the most relevant denial (a key over a command, the later argument first).
// Commands with the no_auth flag (AUTH, HELLO, QUIT, ...) are always allowed.
AclVerdict CheckAclUser(const AclUser& user, const CommandSpec& spec, Args args);

// For the gate: brings ctx.client's user up to date with the registry, then checks. A denial
// is written to the ACL log with `context` ("toplevel", "multi", "lua"). A client whose user
// was deleted is closed and refused everything.
AclDenial CheckClientAcl(CommandContext& ctx, const CommandSpec& spec, Args args,
                         std::string_view context);

// A failed AUTH or HELLO AUTH, for ACL LOG: reason "auth", object the command as typed.
void LogAuthFailure(CommandContext& ctx, std::string_view command, std::string_view username);

// Re-reads ctx.client's user from the registry when the users changed since it last looked.
void RefreshClientUser(CommandContext& ctx);

}  // namespace sluice::server
