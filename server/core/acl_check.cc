#include "server/core/acl_check.h"

#include <algorithm>
#include <mutex>

#include "server/core/client_info.h"
#include "server/core/client_state.h"
#include "server/core/server_state.h"
#include "sluice/glob.h"

namespace sluice::server {

namespace {

// The permissions key `index` needs (acl_key_perms.h); SET with GET also reads.
uint8_t KeyPerms(const CommandSpec& spec, Args args, size_t index) {
  const AclKeyPerms& p = spec.acl_key_perms;
  if (p.count == 0) return kAclKeyAll;
  uint8_t perms = p.perms[std::min<size_t>(index, p.count - 1u)];
  if (spec.name == "set") {
    for (size_t i = 3; i < args.size(); ++i) {
      if (args[i].size() == 3 && (args[i][0] | 0x20) == 'g' && (args[i][1] | 0x20) == 'e' &&
          (args[i][2] | 0x20) == 't') {
        perms |= kAclKeyRead;
      }
    }
  }
  return perms;
}

bool KeyAllowed(const AclSelector& s, std::string_view key, uint8_t perms) {
  for (const AclKeyPattern& p : s.keys) {
    if ((p.perms & perms) == perms && GlobMatch(p.pattern, key)) return true;
  }
  return false;
}

bool FirstArgAllowed(const AclSelector& s, const CommandSpec& spec, Args args) {
  const size_t index = spec.name.find('|') == std::string::npos ? 1 : 2;
  if (args.size() <= index) return false;
  for (const auto& [id, allowed] : s.first_args) {
    if (id != spec.id) continue;
    for (const std::string& a : allowed) {
      if (a.size() == args[index].size() &&
          std::equal(a.begin(), a.end(), args[index].begin(), [](char x, char y) {
            return std::tolower(static_cast<unsigned char>(x)) ==
                   std::tolower(static_cast<unsigned char>(y));
          })) {
        return true;
      }
    }
  }
  return false;
}

// A channel against the selector's `&` patterns: a channel matches a glob pattern; a pattern
// (PSUBSCRIBE's argument) must equal an allowed pattern, as Redis 7.0 compares them.
bool ChannelAllowed(const AclSelector& s, std::string_view channel, bool is_pattern) {
  for (const std::string& p : s.channels) {
    if (is_pattern ? std::string_view(p) == channel : GlobMatch(p, channel)) return true;
  }
  return false;
}

// The channel arguments Redis 7.0's ACL checks: PUBLISH and SPUBLISH publish to their first
// argument; SUBSCRIBE, SSUBSCRIBE and PSUBSCRIBE (patterns) subscribe to every argument. The
// unsubscribes are never refused. Returns the first refused argument's position, or 0.
int RefusedChannel(const AclSelector& s, const CommandSpec& spec, Args args) {
  if (s.all_channels || !(spec.flags & kPubSub)) return 0;
  const std::string& name = spec.name;
  size_t last = 0;
  bool pattern = false;
  if (name == "publish" || name == "spublish") {
    last = 1;
  } else if (name == "subscribe" || name == "ssubscribe") {
    last = args.size() - 1;
  } else if (name == "psubscribe") {
    last = args.size() - 1;
    pattern = true;
  }
  for (size_t i = 1; i <= last && i < args.size(); ++i) {
    if (!ChannelAllowed(s, args[i], pattern)) return static_cast<int>(i);
  }
  return 0;
}

// Redis's ACLSelectorCheckCmd: the command, then its keys, then its channels.
AclVerdict CheckSelector(const AclSelector& s, const CommandSpec& spec, Args args,
                         const std::vector<int>& positions) {
  if (!s.all_commands && !(spec.flags & kNoAuth) && !s.Allows(spec.id) &&
      !FirstArgAllowed(s, spec, args)) {
    return {AclDenial::kCommand, 0};
  }
  if (!s.all_keys) {
    for (size_t i = 0; i < positions.size(); ++i) {
      const std::string_view key = args[static_cast<size_t>(positions[i])];
      if (!KeyAllowed(s, key, KeyPerms(spec, args, i))) {
        return {AclDenial::kKey, positions[i]};
      }
    }
  }
  if (const int pos = RefusedChannel(s, spec, args); pos != 0) {
    return {AclDenial::kChannel, pos};
  }
  return {};
}

void AddLogEntry(CommandContext& ctx, AclDenial reason, std::string_view context,
                 std::string_view object, std::string_view username) {
  AclLogEntry e;
  e.reason = reason;
  e.context = std::string(context);
  e.object = std::string(object);
  e.username = std::string(username);
  e.created_ms = ServerState::RealNowMs();
  {
    std::lock_guard lock(ctx.server.clients().mutex());
    e.client_info = ClientInfoLine(ctx.client, e.created_ms);
  }
  ctx.server.acl().Log(std::move(e));
}

void LogDenial(CommandContext& ctx, const CommandSpec& spec, Args args, AclVerdict v,
               std::string_view context) {
  const std::string_view object =
      v.denial == AclDenial::kCommand ? std::string_view(spec.name) : args[v.pos];
  AddLogEntry(ctx, v.denial, context, object, ctx.client.user_name);
}

}  // namespace

AclVerdict CheckAclUser(const AclUser& user, const CommandSpec& spec, Args args) {
  thread_local std::vector<int> positions;
  positions.clear();
  CommandKeyPositions(spec, args, &positions);
  AclVerdict relevant{AclDenial::kCommand, 0};
  for (const AclSelector& s : user.selectors) {
    const AclVerdict v = CheckSelector(s, spec, args, positions);
    if (v.denial == AclDenial::kNone) return v;
    if (v.denial > relevant.denial || (v.denial == relevant.denial && v.pos > relevant.pos)) {
      relevant = v;
    }
  }
  return relevant;
}

void LogAuthFailure(CommandContext& ctx, std::string_view command, std::string_view username) {
  AddLogEntry(ctx, AclDenial::kNone, ctx.client.multi.active ? "multi" : "toplevel", command,
              username);
}

void RefreshClientUser(CommandContext& ctx) {
  ClientState& c = ctx.client;
  const uint64_t generation = ctx.server.acl().generation();
  if (generation == c.acl_generation) return;
  AclRegistry::UserPtr user = ctx.server.acl().Find(c.user_name);
  std::lock_guard lock(ctx.server.clients().mutex());
  c.acl_generation = generation;
  c.acl_unrestricted = user != nullptr && user->Unrestricted();
  if (user == nullptr) c.close_after_reply = true;  // its user was deleted: as Redis, close
  c.user = std::move(user);
}

AclDenial CheckClientAcl(CommandContext& ctx, const CommandSpec& spec, Args args,
                         std::string_view context) {
  RefreshClientUser(ctx);
  if (ctx.client.acl_unrestricted) return AclDenial::kNone;
  if (ctx.client.user == nullptr) return AclDenial::kCommand;
  const AclVerdict v = CheckAclUser(*ctx.client.user, spec, args);
  if (v.denial != AclDenial::kNone) LogDenial(ctx, spec, args, v, context);
  return v.denial;
}

}  // namespace sluice::server
