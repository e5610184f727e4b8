#include "server/limiter_args.h"

#include <string>

#include "server/args.h"

namespace sluice::server {
namespace {

// What follows an option keyword.
enum class ValueKind { kNone, kNonNegative, kPositive, kText };

struct OptionInfo {
  std::string_view keyword;  // upper case, as error messages spell it
  unsigned bit;
  ValueKind value;
};

constexpr OptionInfo kOptions[] = {
    {"BURST", kOptBurst, ValueKind::kPositive},
    {"COST", kOptCost, ValueKind::kNonNegative},
    {"DELAY", kOptDelay, ValueKind::kNonNegative},
    {"NODELAY", kOptNoDelay, ValueKind::kNone},
    {"ID", kOptId, ValueKind::kText},
};

const OptionInfo* FindOption(std::string_view word, unsigned accepted) {
  for (const OptionInfo& info : kOptions) {
    if ((accepted & info.bit) != 0 && EqualsIgnoreCase(word, info.keyword)) return &info;
  }
  return nullptr;
}

Status StoreOption(const OptionInfo& info, unsigned accepted, std::string_view value,
                   LimiterOptions* out) {
  ValueKind kind = info.value;
  if (info.bit == kOptBurst && (accepted & kOptBurstMayBeZero) != 0) {
    kind = ValueKind::kNonNegative;
  }
  int64_t number = 0;
  Status status;
  if (kind == ValueKind::kPositive) status = ParsePositive(value, info.keyword, &number);
  if (kind == ValueKind::kNonNegative) status = ParseNonNegative(value, info.keyword, &number);
  if (!status.ok()) return status;
  switch (info.bit) {
    case kOptBurst:
      out->burst = number;
      break;
    case kOptCost:
      out->cost = number;
      break;
    case kOptDelay:
      out->delay = number;
      break;
    case kOptId:
      if (value.empty()) return Status::InvalidArgument("invalid ID: must not be empty");
      out->id = value;
      break;
    default:
      break;
  }
  return Status::Ok();
}

// The text echoed in an error, cut short so a huge argument cannot make a huge error.
std::string Quoted(std::string_view s) {
  constexpr size_t kMaxEcho = 64;
  if (s.size() > kMaxEcho) return "'" + std::string(s.substr(0, kMaxEcho)) + "...'";
  return "'" + std::string(s) + "'";
}

}  // namespace

Status ParsePositive(std::string_view text, std::string_view name, int64_t* out) {
  std::optional<int64_t> v = ParseInt64(text);
  if (!v || *v <= 0) {
    return Status::InvalidArgument("invalid " + std::string(name) + ": must be a positive integer");
  }
  *out = *v;
  return Status::Ok();
}

Status ParseNonNegative(std::string_view text, std::string_view name, int64_t* out) {
  std::optional<int64_t> v = ParseInt64(text);
  if (!v || *v < 0) {
    return Status::InvalidArgument("invalid " + std::string(name) +
                                   ": must be a non-negative integer");
  }
  *out = *v;
  return Status::Ok();
}

Status FromLimiterMessage(const std::string& message) {
  if (message.empty()) return Status::Ok();
  return Status::InvalidArgument(message);
}

Status ParseDurationArg(std::string_view text, std::string_view name, int64_t* ns) {
  return FromLimiterMessage(limiter::ParseDuration(text, name, ns));
}

Status ParseLimiterOptions(Args args, size_t first, unsigned accepted, LimiterOptions* out) {
  for (size_t i = first; i < args.size(); ++i) {
    const OptionInfo* info = FindOption(args[i], accepted);
    if (info == nullptr) return Status::InvalidArgument("unknown option " + Quoted(args[i]));
    if (out->has(info->bit)) {
      return Status::InvalidArgument("duplicate option " + Quoted(info->keyword));
    }
    out->seen |= info->bit;
    if (info->value == ValueKind::kNone) continue;
    if (i + 1 >= args.size()) {
      return Status::InvalidArgument("missing value for option " + Quoted(info->keyword));
    }
    Status status = StoreOption(*info, accepted, args[++i], out);
    if (!status.ok()) return status;
  }
  if (out->has(kOptDelay) && out->has(kOptNoDelay)) {
    return Status::InvalidArgument("invalid DELAY: not allowed together with NODELAY");
  }
  return Status::Ok();
}

namespace {

void WriteField(protocol::ReplyWriter& out, std::string_view name, int64_t value) {
  if (out.resp() >= 3) out.Bulk(name);
  out.Integer(value);
}

void WriteExtra(protocol::ReplyWriter& out, const ExtraField& field) {
  if (out.resp() >= 3) out.Bulk(field.name);
  if (field.integer) {
    out.Integer(*field.integer);
  } else if (field.bulk) {
    out.Bulk(*field.bulk);
  } else {
    out.NullBulk();
  }
}

}  // namespace

void ReplyDecision(protocol::ReplyWriter& out, const limiter::Decision& decision,
                   std::span<const ExtraField> extras) {
  const size_t fields = 5 + extras.size();
  if (out.resp() >= 3) {
    out.Map(fields);
  } else {
    out.Array(fields);
  }
  WriteField(out, "allowed", decision.allowed ? 1 : 0);
  WriteField(out, "remaining", decision.remaining);
  WriteField(out, "retry_after_ms", limiter::CeilMs(decision.retry_after_ns));
  WriteField(out, "reset_after_ms", limiter::CeilMs(decision.reset_after_ns));
  WriteField(out, "limit", decision.limit);
  for (const ExtraField& field : extras) WriteExtra(out, field);
}

}  // namespace sluice::server
