// Expiry-option parsing shared by the string commands (SET, GETEX, SETEX, PSETEX) and the key
// commands (EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT), with Redis 7.0's acceptance rules and error
// precedence. Pure functions of their arguments (the current time is passed in).
#pragma once

#include <cstdint>
#include <string_view>

#include "server/core/command.h"
#include "sluice/status.h"
#include "sluice/store.h"

namespace sluice::server {

// The options of SET (key value [NX|XX] [GET] [EX|PX|EXAT|PXAT t|KEEPTTL]) and of GETEX
// (key [EX|PX|EXAT|PXAT t|PERSIST]), as Redis's parseExtendedStringArguments accepts them:
// in any order, a keyword may repeat (the last time value wins), conflicting keywords and a
// missing time value are "ERR syntax error". The time value itself is not parsed here.
struct StringOptions {
  enum class Expiry { kNone, kKeepTtl, kPersist, kEx, kPx, kExAt, kPxAt };
  SetCondition condition = SetCondition::kAlways;
  bool get = false;  // SET ... GET
  Expiry expiry = Expiry::kNone;
  std::string_view time_arg;  // the text after EX/PX/EXAT/PXAT
};

enum class StringCommandKind { kSet, kGetEx };

// Parses args[first..] into *out. SyntaxError() on any unknown or conflicting keyword.
Status ParseStringOptions(Args args, size_t first, StringCommandKind kind, StringOptions* out);

// Redis's getExpireMillisecondsOrReply: `text` must be an integer (else kNotInteger), > 0 (else
// InvalidExpireTime(command)); seconds are scaled to ms and relative times (`relative`) are
// added to now_ms, with overflow giving InvalidExpireTime(command). Sets *at_ms (absolute).
Status ParsePositiveExpiry(std::string_view text, bool seconds, bool relative, int64_t now_ms,
                           std::string_view command, int64_t* at_ms);
// The same for a value already parsed (everything after the integer check).
Status PositiveExpiryAt(int64_t value, bool seconds, bool relative, int64_t now_ms,
                        std::string_view command, int64_t* at_ms);

// Resolves a parsed StringOptions expiry into the store's ExpiryChange. kNone maps to
// `default_kind` (SET clears the TTL, GETEX keeps it).
Status ResolveStringExpiry(const StringOptions& options, int64_t now_ms, std::string_view command,
                           ExpiryChange::Kind default_kind, ExpiryChange* out);

// EXPIRE-family options NX|XX|GT|LT (args[first..]), as Redis's parseExtendedExpireArguments:
// any order, case-insensitive, repeats allowed; an unknown word -> "ERR Unsupported option
// <word>"; NX with XX/GT/LT and GT with LT are rejected with Redis's texts. Sets *cond to the
// flags given (XX with GT or LT gives both flags; the Store evaluates them together).
Status ParseExpireOptions(Args args, size_t first, ExpireCondition* cond);

// EXPIRE-family time: an integer, possibly negative (a past time deletes the key). Seconds are
// scaled to ms and base_ms (now, or 0 for the *AT forms) is added, both overflow-checked ->
// InvalidExpireTime(command). Sets *at_ms (absolute ms since the epoch).
Status ParseExpireTime(std::string_view text, bool seconds, int64_t base_ms,
                       std::string_view command, int64_t* at_ms);
// The same for a value already parsed (everything after the integer check).
Status ExpireTimeAt(int64_t value, bool seconds, int64_t base_ms, std::string_view command,
                    int64_t* at_ms);

}  // namespace sluice::server
