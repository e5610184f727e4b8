#include "server/commands/stream_args.h"

#include <cerrno>
#include <cstdlib>
#include <string>

#include "server/core/args.h"
#include "server/core/errors.h"
#include "server/core/server_state.h"

namespace sluice::server {

namespace {

// Redis's string2ull: string2ll when it parses (negatives refused), else strtoull over the
// whole, non-empty string.
bool ParseULL(std::string_view s, uint64_t* out) {
  if (auto v = ParseInt64(s)) {
    if (*v < 0) return false;
    *out = static_cast<uint64_t>(*v);
    return true;
  }
  const std::string copy(s);
  if (copy.empty() || copy.find('\0') != std::string::npos) return false;
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(copy.c_str(), &end, 10);
  if (errno == EINVAL || errno == ERANGE || *end != '\0') return false;
  *out = v;
  return true;
}

}  // namespace

Result<StreamId> ParseStreamId(std::string_view arg, uint64_t missing_seq, bool strict,
                               bool* seq_given) {
  if (arg.size() > 127) return StreamBadId();
  if (strict && (arg == "-" || arg == "+")) return StreamBadId();
  if (seq_given != nullptr) *seq_given = true;
  if (arg == "-") return StreamId{};
  if (arg == "+") return StreamId::Max();
  // Redis works on a C string: an embedded NUL ends it.
  arg = arg.substr(0, arg.find('\0'));
  StreamId id;
  const size_t dash = arg.find('-');
  if (!ParseULL(arg.substr(0, dash), &id.ms)) return StreamBadId();
  if (dash == std::string_view::npos) {
    id.seq = missing_seq;
    return id;
  }
  std::string_view seq = arg.substr(dash + 1);
  if (seq_given != nullptr && seq == "*") {
    *seq_given = false;
    return id;
  }
  if (!ParseULL(seq, &id.seq)) return StreamBadId();
  return id;
}

Result<StreamId> ParseRangeStart(std::string_view arg) {
  const bool exclusive = arg.size() > 1 && arg[0] == '(';
  auto id = ParseStreamId(exclusive ? arg.substr(1) : arg, 0, exclusive);
  if (!id.ok() || !exclusive) return id;
  StreamId v = *id;
  if (!v.Increment()) return StreamBadStart();
  return v;
}

Result<StreamId> ParseRangeEnd(std::string_view arg) {
  const bool exclusive = arg.size() > 1 && arg[0] == '(';
  auto id = ParseStreamId(exclusive ? arg.substr(1) : arg, UINT64_MAX, exclusive);
  if (!id.ok() || !exclusive) return id;
  StreamId v = *id;
  if (!v.Decrement()) return StreamBadEnd();
  return v;
}

// Redis's streamParseAddOrTrimArgsOrReply, check for check.
std::optional<StreamAddArgs> ParseAddOrTrimArgs(CommandContext& ctx, Args args, bool xadd) {
  StreamAddArgs out;
  StreamTrim& trim = out.options.trim;
  auto fail = [&](const Status& s) {
    ReplyError(ctx.out, s);
    return std::nullopt;
  };
  bool limit_given = false;
  size_t i = 2;
  for (; i < args.size(); ++i) {
    const size_t more = args.size() - 1 - i;
    std::string_view opt = args[i];
    const bool maxlen = EqualsIgnoreCase(opt, "maxlen");
    if (xadd && opt == "*") {
      break;
    } else if ((maxlen || EqualsIgnoreCase(opt, "minid")) && more > 0) {
      if (trim.by != StreamTrim::By::kNone) return fail(StreamMaxlenAndMinid());
      trim.approx = false;
      std::string_view next = args[i + 1];
      if (more >= 2 && (next == "~" || next == "=")) {
        trim.approx = next == "~";
        ++i;
      }
      if (maxlen) {
        auto n = ParseInt64(args[i + 1]);
        if (!n) return fail(NotAnInteger());
        if (*n < 0) return fail(StreamMaxlenNegative());
        trim.max_len = *n;
        trim.by = StreamTrim::By::kMaxLen;
      } else {
        auto id = ParseStreamId(args[i + 1], 0, true);
        if (!id.ok()) return fail(id.status());
        trim.min_id = *id;
        trim.by = StreamTrim::By::kMinId;
      }
      ++i;
    } else if (EqualsIgnoreCase(opt, "limit") && more > 0) {
      auto n = ParseInt64(args[i + 1]);
      if (!n) return fail(NotAnInteger());
      if (*n < 0) return fail(StreamLimitNegative());
      trim.limit = *n;
      limit_given = true;
      ++i;
    } else if (xadd && EqualsIgnoreCase(opt, "nomkstream")) {
      out.options.no_mkstream = true;
    } else if (xadd) {
      bool seq_given = true;
      auto id = ParseStreamId(opt, 0, true, &seq_given);
      if (!id.ok()) return fail(id.status());
      out.options.id = *id;
      out.options.mode =
          seq_given ? StreamAddOptions::IdMode::kExplicit : StreamAddOptions::IdMode::kAutoSeq;
      break;
    } else {
      return fail(SyntaxError());
    }
  }
  if (trim.limit != 0 && trim.by == StreamTrim::By::kNone) return fail(StreamLimitNoStrategy());
  if (!xadd && trim.by == StreamTrim::By::kNone) return fail(StreamTrimNoStrategy());
  if (limit_given) {
    if (!trim.approx) return fail(StreamLimitNoApprox());
  } else if (trim.approx) {
    // 100 nodes of stream-node-max-entries, as Redis (10000 when that is 0, at most 1000000).
    const int64_t entries = ctx.server.stream_node_max_entries();
    trim.limit = entries > 0 && entries <= 10000 ? 100 * entries : entries > 0 ? 1000000 : 10000;
  } else {
    trim.limit = 0;
  }
  out.id_pos = i;
  return out;
}

void ReplyStreamEntries(protocol::ReplyWriter& out, const std::vector<StreamEntry>& entries) {
  out.Array(entries.size());
  for (const auto& e : entries) {
    out.Array(2);
    out.Bulk(e.id.ToText());
    if (e.missing) {
      out.NullArray();
      continue;
    }
    out.Array(e.fields.size());
    for (const auto& f : e.fields) out.Bulk(f);
  }
}

}  // namespace sluice::server
