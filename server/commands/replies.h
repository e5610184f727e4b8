// Reply helpers the command families share: a Result's value or its error, in one line. The
// error text comes from ReplyError (server/core/errors.h), the one place Redis errors are spelled.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "protocol/reply_writer.h"
#include "server/core/command.h"
#include "server/core/errors.h"
#include "sluice/status.h"

namespace sluice::server {

// A bulk string, or nil when absent.
inline void ReplyOptional(protocol::ReplyWriter& out, const std::optional<std::string>& v) {
  if (v) {
    out.Bulk(*v);
  } else {
    out.NullBulk();
  }
}

inline void ReplyOptional(CommandContext& ctx, const Result<std::optional<std::string>>& r) {
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  ReplyOptional(ctx.out, *r);
}

inline void ReplyInteger(CommandContext& ctx, const Result<int64_t>& r) {
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  ctx.out.Integer(*r);
}

// 1 for true, 0 for false (Redis's boolean integers).
inline void ReplyBool(CommandContext& ctx, const Result<bool>& r) {
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  ctx.out.Integer(*r ? 1 : 0);
}

}  // namespace sluice::server
