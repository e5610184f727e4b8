// Client-side caching's commands: CLIENT TRACKING, CLIENT CACHING, CLIENT GETREDIR and CLIENT
// TRACKINGINFO, with Redis 7.0.15's option checks, in its order, and its error texts. The table
// and the invalidations live in server/core/tracking.h.
#include <optional>
#include <string_view>
#include <vector>

#include "server/commands/commands.h"
#include "server/core/args.h"
#include "server/core/errors.h"
#include "server/core/server_state.h"
#include "server/core/tracking.h"

namespace sluice::server {

namespace {

uint32_t Flags(const ClientState& c) { return c.tracking.load(std::memory_order_relaxed); }

// CLIENT TRACKING ON|OFF [REDIRECT id] [BCAST] [PREFIX p]... [OPTIN] [OPTOUT] [NOLOOP]
void ClientTracking(CommandContext& ctx, Args args) {
  uint64_t redirect = 0;
  uint32_t options = 0;
  std::vector<std::string_view> prefixes;
  for (size_t j = 3; j < args.size(); ++j) {
    const bool more = j + 1 < args.size();
    if (EqualsIgnoreCase(args[j], "redirect") && more) {
      ++j;
      if (redirect != 0) return ReplyError(ctx.out, Tracking(TrackingError::kRedirectTwice));
      std::optional<int64_t> id = ParseInt64(args[j]);
      if (!id) return ReplyError(ctx.out, NotAnInteger());
      // Redis requires the client to exist now (it may go away later: a broken redirect).
      const bool exists = *id > 0 && ctx.server.clients().WithClient(static_cast<uint64_t>(*id),
                                                                     [](ClientState&) {});
      if (!exists) return ReplyError(ctx.out, Tracking(TrackingError::kNoRedirectTarget));
      redirect = static_cast<uint64_t>(*id);
    } else if (EqualsIgnoreCase(args[j], "bcast")) {
      options |= kTrackingBcast;
    } else if (EqualsIgnoreCase(args[j], "optin")) {
      options |= kTrackingOptin;
    } else if (EqualsIgnoreCase(args[j], "optout")) {
      options |= kTrackingOptout;
    } else if (EqualsIgnoreCase(args[j], "noloop")) {
      options |= kTrackingNoloop;
    } else if (EqualsIgnoreCase(args[j], "prefix") && more) {
      prefixes.push_back(args[++j]);
    } else {
      return ReplyError(ctx.out, SyntaxError());
    }
  }
  TrackingRegistry& tracking = ctx.server.tracking();
  if (EqualsIgnoreCase(args[2], "on")) {
    const uint32_t flags = Flags(ctx.client);
    if (!(options & kTrackingBcast) && !prefixes.empty()) {
      return ReplyError(ctx.out, Tracking(TrackingError::kPrefixNeedsBcast));
    }
    if ((flags & kTrackingOn) &&
        ((flags & kTrackingBcast) != 0) != ((options & kTrackingBcast) != 0)) {
      return ReplyError(ctx.out, Tracking(TrackingError::kSwitchBcast));
    }
    if ((options & kTrackingBcast) && (options & (kTrackingOptin | kTrackingOptout))) {
      return ReplyError(ctx.out, Tracking(TrackingError::kOptBcast));
    }
    if ((options & kTrackingOptin) && (options & kTrackingOptout)) {
      return ReplyError(ctx.out, Tracking(TrackingError::kOptinAndOptout));
    }
    if (((options & kTrackingOptin) && (flags & kTrackingOptout)) ||
        ((options & kTrackingOptout) && (flags & kTrackingOptin))) {
      return ReplyError(ctx.out, Tracking(TrackingError::kSwitchOpt));
    }
    if (options & kTrackingBcast) {
      if (auto c = tracking.FindCollision(ctx.client, prefixes)) {
        return ReplyError(ctx.out, TrackingPrefixOverlap(c->prefix, c->other, c->existing));
      }
    }
    tracking.Enable(ctx.client, redirect, options, prefixes);
  } else if (EqualsIgnoreCase(args[2], "off")) {
    tracking.Disable(ctx.client);
  } else {
    return ReplyError(ctx.out, SyntaxError());
  }
  ctx.out.Simple("OK");
}

// CLIENT CACHING YES|NO: the next command (or transaction) is cached (OPTIN) or not (OPTOUT).
void ClientCaching(CommandContext& ctx, Args args) {
  const uint32_t flags = Flags(ctx.client);
  if (!(flags & kTrackingOn)) {
    return ReplyError(ctx.out, Tracking(TrackingError::kCachingNotTracking));
  }
  if (EqualsIgnoreCase(args[2], "yes")) {
    if (!(flags & kTrackingOptin)) return ReplyError(ctx.out, Tracking(TrackingError::kCachingYes));
  } else if (EqualsIgnoreCase(args[2], "no")) {
    if (!(flags & kTrackingOptout)) return ReplyError(ctx.out, Tracking(TrackingError::kCachingNo));
  } else {
    return ReplyError(ctx.out, SyntaxError());
  }
  ctx.client.tracking.fetch_or(kTrackingCaching, std::memory_order_relaxed);
  ctx.out.Simple("OK");
}

int64_t Redirect(const ClientState& c) {
  if (!(Flags(c) & kTrackingOn)) return -1;
  return static_cast<int64_t>(c.tracking_redirect.load(std::memory_order_relaxed));
}

void ClientGetRedir(CommandContext& ctx, Args) { ctx.out.Integer(Redirect(ctx.client)); }

void ClientTrackingInfo(CommandContext& ctx, Args) {
  const uint32_t flags = Flags(ctx.client);
  std::vector<std::string_view> names;
  names.push_back((flags & kTrackingOn) ? "on" : "off");
  if (flags & kTrackingBcast) names.push_back("bcast");
  if (flags & kTrackingOptin) {
    names.push_back("optin");
    if (flags & kTrackingCaching) names.push_back("caching-yes");
  }
  if (flags & kTrackingOptout) {
    names.push_back("optout");
    if (flags & kTrackingCaching) names.push_back("caching-no");
  }
  if (flags & kTrackingNoloop) names.push_back("noloop");
  if (flags & kTrackingBrokenRedir) names.push_back("broken_redirect");
  ctx.out.Map(3);
  ctx.out.Bulk("flags");
  ctx.out.Set(names.size());
  for (std::string_view n : names) ctx.out.Bulk(n);
  ctx.out.Bulk("redirect");
  ctx.out.Integer(Redirect(ctx.client));
  ctx.out.Bulk("prefixes");
  const std::vector<std::string> prefixes = ctx.server.tracking().Prefixes(ctx.client);
  ctx.out.Array(prefixes.size());
  for (const std::string& p : prefixes) ctx.out.Bulk(p);
}

}  // namespace

void RegisterTrackingCommands(CommandTable& table) {
  constexpr uint32_t kFlags = kNoScript | kLoading | kStale;
  table.Add(MakeSpec("connection", "client|tracking", -3, kFlags, {}, ClientTracking,
                     "Enable or disable server assisted client side caching support", "6.0.0",
                     "ON|OFF [REDIRECT client-id] [PREFIX prefix [PREFIX prefix ...]] [BCAST] "
                     "[OPTIN] [OPTOUT] [NOLOOP]"));
  table.Add(MakeSpec("connection", "client|caching", 3, kFlags, {}, ClientCaching,
                     "Instruct the server about tracking or not keys in the next request", "6.0.0",
                     "YES|NO"));
  table.Add(MakeSpec("connection", "client|getredir", 2, kFlags, {}, ClientGetRedir,
                     "Get tracking notifications redirection client ID if any", "6.0.0", ""));
  table.Add(MakeSpec("connection", "client|trackinginfo", 2, kFlags, {}, ClientTrackingInfo,
                     "Return information about server assisted client side caching for the "
                     "current connection",
                     "6.2.0", ""));
}

}  // namespace sluice::server
