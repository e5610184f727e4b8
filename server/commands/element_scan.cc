#include "server/commands/element_scan.h"

#include <string>

#include "server/core/args.h"
#include "server/core/errors.h"

namespace sluice::server {

void ElementScanCommand(CommandContext& ctx, Args args, ElementSizeFn size, ElementScanFn scan,
                        bool values) {
  ElementScanArgs parsed;
  std::optional<uint64_t> cursor = ParseScanCursor(args[2]);
  if (!cursor) return ReplyError(ctx.out, InvalidCursor());
  parsed.cursor = *cursor;
  Result<int64_t> n = size(ctx, args[1]);
  if (!n.ok()) return ReplyError(ctx.out, n.status());
  if (*n == 0) {
    ctx.out.Array(2);
    ctx.out.Bulk("0");
    ctx.out.Array(0);
    return;
  }
  for (size_t i = 3; i < args.size(); i += 2) {
    const bool has_value = i + 1 < args.size();
    if (has_value && EqualsIgnoreCase(args[i], "count")) {
      std::optional<int64_t> c = ParseInt64(args[i + 1]);
      if (!c) return ReplyError(ctx.out, NotAnInteger());
      if (*c < 1) return ReplyError(ctx.out, SyntaxError());
      parsed.count = *c;
    } else if (has_value && EqualsIgnoreCase(args[i], "match")) {
      parsed.match = args[i + 1];
    } else {
      return ReplyError(ctx.out, SyntaxError());
    }
  }
  if (parsed.match && *parsed.match == "*") parsed.match.reset();
  Result<ElementScanReply> r = scan(ctx, args[1], parsed);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  ctx.out.Array(2);
  ctx.out.Bulk(std::to_string(r->next_cursor));
  ctx.out.Array(r->items.size() * (values ? 2 : 1));
  for (const auto& [element, value] : r->items) {
    ctx.out.Bulk(element);
    if (values) ctx.out.Bulk(value);
  }
}

}  // namespace sluice::server
