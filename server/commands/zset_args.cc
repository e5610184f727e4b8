// Shared sorted set argument parsing and replies (zset_args.h).
#include "server/commands/zset_args.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include "server/core/errors.h"

namespace sluice::server {

namespace {

using ScoreBound = Store::Transaction::ScoreBound;
using LexBound = Store::Transaction::LexBound;

// Redis's zslParseRange: strtod over the C string, so "" and a bare "(" read as 0 and the text
// ends at its first NUL byte.
std::optional<ScoreBound> ParseBound(std::string_view s) {
  ScoreBound b;
  if (!s.empty() && s[0] == '(') {
    b.exclusive = true;
    s.remove_prefix(1);
  }
  const std::string text(s.substr(0, s.find('\0')));
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || std::isnan(v)) return std::nullopt;
  b.value = v;
  return b;
}

// Redis's zslParseLexRangeItem.
std::optional<LexBound> ParseLexBound(std::string_view s) {
  LexBound b;
  if (s.empty()) return std::nullopt;
  switch (s[0]) {
    case '+':
    case '-':
      if (s.size() != 1) return std::nullopt;
      b.kind = s[0] == '+' ? LexBound::Kind::kMax : LexBound::Kind::kMin;
      b.exclusive = true;
      return b;
    case '(':
    case '[':
      b.kind = LexBound::Kind::kMember;
      b.exclusive = s[0] == '(';
      b.member = std::string(s.substr(1));
      return b;
    default:
      return std::nullopt;
  }
}

}  // namespace

std::optional<double> ParseScore(std::string_view s) {
  if (s.empty() || std::isspace(static_cast<unsigned char>(s[0]))) return std::nullopt;
  const std::string text(s);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || std::isnan(v)) return std::nullopt;
  if (errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL || v == 0)) return std::nullopt;
  return v;
}

bool ParseScoreRange(CommandContext& ctx, std::string_view min, std::string_view max,
                     ScoreBound* lo, ScoreBound* hi) {
  std::optional<ScoreBound> a = ParseBound(min);
  std::optional<ScoreBound> b = ParseBound(max);
  if (!a || !b) {
    ReplyError(ctx.out, MinOrMaxNotFloat());
    return false;
  }
  *lo = *a;
  *hi = *b;
  return true;
}

bool ParseLexRange(CommandContext& ctx, std::string_view min, std::string_view max, LexBound* lo,
                   LexBound* hi) {
  std::optional<LexBound> a = ParseLexBound(min);
  std::optional<LexBound> b = ParseLexBound(max);
  if (!a || !b) {
    ReplyError(ctx.out, LexRangeNotValid());
    return false;
  }
  *lo = std::move(*a);
  *hi = std::move(*b);
  return true;
}

void ReplyScore(CommandContext& ctx, const std::optional<double>& score) {
  if (score) {
    ctx.out.Double(*score);
  } else {
    ctx.out.NullBulk();
  }
}

void ReplyScoredMembers(CommandContext& ctx, const Store::Transaction::ScoredMembers& r,
                        bool with_scores, bool flat) {
  const bool pairs = with_scores && ctx.out.resp() == 3 && !flat;
  ctx.out.Array(r.size() * (with_scores && !pairs ? 2 : 1));
  for (const auto& [member, score] : r) {
    if (pairs) ctx.out.Array(2);
    ctx.out.Bulk(member);
    if (with_scores) ctx.out.Double(score);
  }
}

}  // namespace sluice::server
