#include "server/commands/limiter_args.h"

#include <string>

#include "server/core/args.h"

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
    {"REFUND", kOptRefund, ValueKind::kNonNegative},
    {"HEADERS", kOptHeaders, ValueKind::kNone},
    {"POLICY", kOptPolicy, ValueKind::kText},
};

// A policy name must be an sf-string's content that needs no escaping.
bool ValidPolicyName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') return false;
  }
  return true;
}

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
    case kOptRefund:
      out->refund = number;
      break;
    case kOptPolicy:
      if (!ValidPolicyName(value)) {
        return Status::InvalidArgument(
            "invalid POLICY: 1 to 64 printable ASCII characters, no '\"' or '\\'");
      }
      out->policy = value;
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
  if (out->has(kOptCost) && out->has(kOptRefund)) {
    return Status::InvalidArgument("invalid REFUND: not allowed together with COST");
  }
  return Status::Ok();
}

Status PolicyWithoutHeaders() {
  return Status::InvalidArgument("invalid POLICY: only together with HEADERS");
}

size_t OptionSpan(Args args, size_t i, unsigned accepted) {
  const OptionInfo* info = FindOption(args[i], accepted);
  if (info == nullptr) return 0;
  return info->value == ValueKind::kNone ? 1 : 2;
}

std::optional<LimitAlgo> ParseAlgo(std::string_view word) {
  if (EqualsIgnoreCase(word, "GCRA")) return LimitAlgo::kGcra;
  if (EqualsIgnoreCase(word, "WINDOW")) return LimitAlgo::kWindow;
  if (EqualsIgnoreCase(word, "SLIDING")) return LimitAlgo::kSliding;
  if (EqualsIgnoreCase(word, "LEAKY")) return LimitAlgo::kLeaky;
  return std::nullopt;
}

unsigned AlgoOptions(LimitAlgo algo) {
  switch (algo) {
    case LimitAlgo::kGcra:
      return kOptBurst;
    case LimitAlgo::kLeaky:
      return kOptBurst | kOptBurstMayBeZero | kOptDelay | kOptNoDelay;
    default:
      return 0;
  }
}

namespace {

// The positional names of each algorithm: the count, then the duration.
std::pair<std::string_view, std::string_view> PositionalNames(LimitAlgo algo) {
  switch (algo) {
    case LimitAlgo::kGcra:
      return {"quota", "period"};
    case LimitAlgo::kLeaky:
      return {"rate", "period"};
    default:
      return {"limit", "window"};
  }
}

std::string MakeParams(LimitAlgo algo, int64_t count, int64_t duration_ns, const LimiterOptions& o,
                       limiter::LimitParams* out) {
  switch (algo) {
    case LimitAlgo::kGcra: {
      limiter::GcraParams p;
      std::string e = limiter::MakeGcraParams(count, duration_ns, o.burst, &p);
      *out = p;
      return e;
    }
    case LimitAlgo::kWindow: {
      limiter::WindowParams p;
      std::string e = limiter::MakeWindowParams(count, duration_ns, &p);
      *out = p;
      return e;
    }
    case LimitAlgo::kSliding: {
      limiter::SlidingParams p;
      std::string e = limiter::MakeSlidingParams(count, duration_ns, &p);
      *out = p;
      return e;
    }
    case LimitAlgo::kLeaky: {
      limiter::LeakyParams p;
      std::string e =
          limiter::MakeLeakyParams(count, duration_ns, o.burst, o.delay, o.has(kOptNoDelay), &p);
      *out = p;
      return e;
    }
  }
  return "invalid algorithm";
}

}  // namespace

Status ParseLimitArgs(LimitAlgo algo, Args args, unsigned extra, LimitArgs* out) {
  const auto [count_name, duration_name] = PositionalNames(algo);
  Status s = ParsePositive(args[0], count_name, &out->quota);
  if (s.ok()) s = ParseDurationArg(args[1], duration_name, &out->window_ns);
  if (s.ok()) s = ParseLimiterOptions(args, 2, AlgoOptions(algo) | extra, &out->opts);
  if (s.ok()) {
    s = FromLimiterMessage(MakeParams(algo, out->quota, out->window_ns, out->opts, &out->params));
  }
  return s;
}

namespace {

void WriteField(protocol::ReplyWriter& out, std::string_view name, int64_t value) {
  if (out.resp() >= 3) out.Bulk(name);
  out.Integer(value);
}

}  // namespace

void FieldName(protocol::ReplyWriter& out, std::string_view name) {
  if (out.resp() >= 3) out.Bulk(name);
}

void WriteExtra(protocol::ReplyWriter& out, const ExtraField& field) {
  FieldName(out, field.name);
  if (field.integer) {
    out.Integer(*field.integer);
  } else if (field.bulk) {
    out.Bulk(*field.bulk);
  } else {
    out.NullBulk();
  }
}

void ReplyDecision(protocol::ReplyWriter& out, const limiter::Decision& decision,
                   std::span<const ExtraField> extras) {
  BeginDecision(out, decision, extras.size());
  for (const ExtraField& field : extras) WriteExtra(out, field);
}

void BeginDecision(protocol::ReplyWriter& out, const limiter::Decision& decision, size_t more) {
  const size_t fields = 5 + more;
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
}

}  // namespace sluice::server
