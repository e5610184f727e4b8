#include "server/core/expiry_args.h"

#include <limits>
#include <optional>
#include <string>

#include "server/core/args.h"
#include "server/core/errors.h"

namespace sluice::server {

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

using Expiry = StringOptions::Expiry;

}  // namespace

Status ParseStringOptions(Args args, size_t first, StringCommandKind kind, StringOptions* out) {
  const bool is_set = kind == StringCommandKind::kSet;
  for (size_t i = first; i < args.size(); ++i) {
    std::string_view opt = args[i];
    const bool has_next = i + 1 < args.size();
    // A timed expiry is accepted again only with the same unit (EX 1 EX 2 is fine, the last
    // wins; EX 1 PX 2 is not), and never with KEEPTTL or PERSIST.
    auto timed = [&](Expiry e) {
      if (!has_next) return false;
      if (out->expiry != Expiry::kNone && out->expiry != e) return false;
      out->expiry = e;
      out->time_arg = args[++i];
      return true;
    };
    bool ok = false;
    if (is_set && EqualsIgnoreCase(opt, "nx")) {
      ok = out->condition != SetCondition::kIfPresent;
      if (ok) out->condition = SetCondition::kIfAbsent;
    } else if (is_set && EqualsIgnoreCase(opt, "xx")) {
      ok = out->condition != SetCondition::kIfAbsent;
      if (ok) out->condition = SetCondition::kIfPresent;
    } else if (is_set && EqualsIgnoreCase(opt, "get")) {
      ok = true;
      out->get = true;
    } else if (is_set && EqualsIgnoreCase(opt, "keepttl")) {
      ok = out->expiry == Expiry::kNone || out->expiry == Expiry::kKeepTtl;
      if (ok) out->expiry = Expiry::kKeepTtl;
    } else if (!is_set && EqualsIgnoreCase(opt, "persist")) {
      ok = out->expiry == Expiry::kNone || out->expiry == Expiry::kPersist;
      if (ok) out->expiry = Expiry::kPersist;
    } else if (EqualsIgnoreCase(opt, "ex")) {
      ok = timed(Expiry::kEx);
    } else if (EqualsIgnoreCase(opt, "px")) {
      ok = timed(Expiry::kPx);
    } else if (EqualsIgnoreCase(opt, "exat")) {
      ok = timed(Expiry::kExAt);
    } else if (EqualsIgnoreCase(opt, "pxat")) {
      ok = timed(Expiry::kPxAt);
    }
    if (!ok) return SyntaxError();
  }
  return Status::Ok();
}

Status ParsePositiveExpiry(std::string_view text, bool seconds, bool relative, int64_t now_ms,
                           std::string_view command, int64_t* at_ms) {
  std::optional<int64_t> value = ParseInt64(text);
  if (!value) return NotAnInteger();
  return PositiveExpiryAt(*value, seconds, relative, now_ms, command, at_ms);
}

Status PositiveExpiryAt(int64_t value, bool seconds, bool relative, int64_t now_ms,
                        std::string_view command, int64_t* at_ms) {
  int64_t ms = value;
  if (ms <= 0 || (seconds && ms > kMax / 1000)) return InvalidExpireTime(command);
  if (seconds) ms *= 1000;
  if (relative) {
    if (ms > kMax - now_ms) return InvalidExpireTime(command);
    ms += now_ms;
  }
  *at_ms = ms;
  return Status::Ok();
}

Status ResolveStringExpiry(const StringOptions& options, int64_t now_ms, std::string_view command,
                           ExpiryChange::Kind default_kind, ExpiryChange* out) {
  switch (options.expiry) {
    case Expiry::kNone:
      *out = ExpiryChange{default_kind, 0};
      return Status::Ok();
    case Expiry::kKeepTtl:
      *out = ExpiryChange{ExpiryChange::Kind::kKeep, 0};
      return Status::Ok();
    case Expiry::kPersist:
      *out = ExpiryChange{ExpiryChange::Kind::kPersist, 0};
      return Status::Ok();
    default:
      break;
  }
  const bool seconds = options.expiry == Expiry::kEx || options.expiry == Expiry::kExAt;
  const bool relative = options.expiry == Expiry::kEx || options.expiry == Expiry::kPx;
  int64_t at_ms = 0;
  Status s = ParsePositiveExpiry(options.time_arg, seconds, relative, now_ms, command, &at_ms);
  if (!s.ok()) return s;
  *out = ExpiryChange{ExpiryChange::Kind::kSetAt, at_ms};
  return Status::Ok();
}

Status ParseExpireOptions(Args args, size_t first, ExpireCondition* cond) {
  using C = ExpireCondition;
  C flags = C::kAlways;
  for (size_t i = first; i < args.size(); ++i) {
    std::string_view opt = args[i];
    if (EqualsIgnoreCase(opt, "nx")) {
      flags |= C::kNX;
    } else if (EqualsIgnoreCase(opt, "xx")) {
      flags |= C::kXX;
    } else if (EqualsIgnoreCase(opt, "gt")) {
      flags |= C::kGT;
    } else if (EqualsIgnoreCase(opt, "lt")) {
      flags |= C::kLT;
    } else {
      return Status::InvalidArgument("Unsupported option " + std::string(opt));
    }
  }
  if (HasAll(flags, C::kNX) && flags != C::kNX) {
    // Starts with an upper-case word, so it spells its own "ERR " (see errors.h).
    return Status::InvalidArgument(
        "ERR NX and XX, GT or LT options at the same time are not compatible");
  }
  if (HasAll(flags, C::kGT | C::kLT)) {
    return Status::InvalidArgument("ERR GT and LT options at the same time are not compatible");
  }
  *cond = flags;
  return Status::Ok();
}

Status ParseExpireTime(std::string_view text, bool seconds, int64_t base_ms,
                       std::string_view command, int64_t* at_ms) {
  std::optional<int64_t> value = ParseInt64(text);
  if (!value) return NotAnInteger();
  return ExpireTimeAt(*value, seconds, base_ms, command, at_ms);
}

Status ExpireTimeAt(int64_t value, bool seconds, int64_t base_ms, std::string_view command,
                    int64_t* at_ms) {
  int64_t when = value;
  if (seconds) {
    if (when > kMax / 1000 || when < kMin / 1000) return InvalidExpireTime(command);
    when *= 1000;
  }
  // Redis checks only the upper bound: base_ms is never negative.
  if (when > kMax - base_ms) return InvalidExpireTime(command);
  *at_ms = when + base_ms;
  return Status::Ok();
}

}  // namespace sluice::server
