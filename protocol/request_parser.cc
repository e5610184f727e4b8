#include "protocol/request_parser.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "protocol/inline_args.h"

namespace sluice::protocol {
namespace {

constexpr size_t kNotFound = std::string_view::npos;

// Redis's string2ll: optional '-', digits without leading zeros ("0" alone is fine), fewer
// than 21 bytes, within int64. No spaces, no '+', no "-0".
bool ParseRedisInt64(std::string_view s, int64_t* out) {
  if (s.empty() || s.size() >= 21) return false;
  if (s == "0") {
    *out = 0;
    return true;
  }
  const bool negative = s[0] == '-';
  size_t i = negative ? 1 : 0;
  if (i == s.size() || s[i] < '1' || s[i] > '9') return false;
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  uint64_t v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    const uint64_t digit = static_cast<uint64_t>(s[i] - '0');
    if (v > kMax / 10 || v * 10 > kMax - digit) return false;
    v = v * 10 + digit;
  }
  constexpr uint64_t kMaxPositive = std::numeric_limits<int64_t>::max();
  if (negative) {
    if (v > kMaxPositive + 1) return false;
    *out = static_cast<int64_t>(0 - v);  // two's complement; exact for v == 2^63 too
  } else {
    if (v > kMaxPositive) return false;
    *out = static_cast<int64_t>(v);
  }
  return true;
}

// Offset of the first `terminator` at or after `from`, or kNotFound if a NUL byte or the end of
// the data comes first (Redis searches with strchr, which stops at NUL). *resume is where a later
// search over the same bytes plus more can start: the NUL, or the end of the data.
size_t FindTerminator(std::string_view data, size_t from, char terminator, size_t* resume) {
  const char* begin = data.data() + from;
  const size_t n = data.size() - from;
  const void* hit = n ? std::memchr(begin, terminator, n) : nullptr;
  const size_t limit = hit ? static_cast<const char*>(hit) - begin : n;
  const void* nul = limit ? std::memchr(begin, '\0', limit) : nullptr;
  if (nul != nullptr) {
    *resume = static_cast<const char*>(nul) - data.data();
    return kNotFound;
  }
  if (hit == nullptr) {
    *resume = data.size();
    return kNotFound;
  }
  return from + limit;
}

// The common header in one pass, without searching: `kind` ('*' or '$') at data[pos], then a
// positive count in canonical decimal ("0", or no leading zero) of at most 18 digits, then
// '\r' and the byte after it. True with *cr (the '\r') and *value set. Anything else (a sign, a
// NUL, more digits, a header cut short) is left to the general reading (FindHeaderEnd,
// ParseRedisInt64), which gives Redis's exact errors; on what this accepts both agree.
bool ReadPlainHeader(std::string_view data, size_t pos, char kind, size_t* cr, uint64_t* value) {
  constexpr size_t kMaxDigits = 18;  // below 10^18: no overflow check
  const size_t size = data.size();
  if (pos >= size || data[pos] != kind) return false;
  const size_t first = pos + 1;
  const size_t scan_end = std::min(size, first + kMaxDigits + 1);
  uint64_t v = 0;
  size_t i = first;
  for (; i < scan_end; ++i) {
    const unsigned digit = static_cast<unsigned char>(data[i]) - unsigned{'0'};
    if (digit > 9) break;
    v = v * 10 + digit;  // at most 19 digits: fits in 64 bits
  }
  const size_t digits = i - first;
  if (digits == 0 || digits > kMaxDigits || (data[first] == '0' && digits > 1)) return false;
  if (i + 1 >= size || data[i] != '\r') return false;
  *cr = i;
  *value = v;
  return true;
}

}  // namespace

ParserLimits UnauthenticatedLimits(const ParserLimits& base) {
  ParserLimits limits = base;
  limits.unauthenticated = true;
  return limits;
}

RequestParser::RequestParser(ParserLimits limits) : limits_(limits) {}

void RequestParser::Reset() {
  in_multibulk_ = false;
  pos_ = 0;
  scan_from_ = 0;
  args_left_ = 0;
  bulk_len_ = -1;
  spans_.clear();
}

ParseResult RequestParser::Parse(std::string_view data, size_t* consumed) {
  *consumed = 0;
  // The caller broke the "same bytes plus more" contract; starting over is the safe reading.
  if (data.size() < pos_ || data.size() < scan_from_) Reset();
  if (data.empty()) return ParseResult::kNeedMore;
  if (data[0] == '*') return ParseMultibulk(data, consumed);
  return ParseInline(data, consumed);
}

ParseResult RequestParser::ParseInline(std::string_view data, size_t* consumed) {
  size_t resume = 0;
  const size_t newline = FindTerminator(data, scan_from_, '\n', &resume);
  if (newline == kNotFound) {
    if (data.size() > limits_.max_inline_len) return Fail("Protocol error: too big inline request");
    scan_from_ = resume;
    return ParseResult::kNeedMore;
  }
  if (newline > limits_.max_inline_len) return Fail("Protocol error: too big inline request");
  size_t line_len = newline;
  if (line_len > 0 && data[line_len - 1] == '\r') --line_len;
  spans_.clear();
  inline_bytes_.clear();
  if (!SplitInlineArgs(data.substr(0, line_len), &inline_bytes_, &spans_)) {
    return Fail("Protocol error: unbalanced quotes in request");
  }
  return Complete(inline_bytes_, newline + 1, consumed);
}

ParseResult RequestParser::ParseMultibulk(std::string_view data, size_t* consumed) {
  if (!in_multibulk_) {
    const ParseResult header = ParseMultibulkHeader(data, consumed);
    if (header != ParseResult::kCommand) return header;
    // A count <= 0 is consumed without a command, as Redis does.
    if (args_left_ <= 0) return Complete(data, pos_, consumed);
  }
  return ParseBulks(data, consumed);
}

ParseResult RequestParser::ParseMultibulkHeader(std::string_view data, size_t* consumed) {
  size_t cr = 0;
  int64_t count = 0;
  if (uint64_t plain = 0;
      ReadPlainHeader(data, 0, '*', &cr, &plain) && cr <= limits_.max_inline_len) {
    count = static_cast<int64_t>(plain);
  } else {
    const ParseResult found =
        FindHeaderEnd(data, "Protocol error: too big mbulk count string", &cr);
    if (found != ParseResult::kCommand) return found;
    if (!ParseRedisInt64(data.substr(1, cr - 1), &count)) {
      return Fail("Protocol error: invalid multibulk length");
    }
  }
  if (count > limits_.max_multibulk_len) return Fail("Protocol error: invalid multibulk length");
  if (limits_.unauthenticated && count > kUnauthenticatedMaxMultibulkLen) {
    return Fail("Protocol error: unauthenticated multibulk length");
  }
  in_multibulk_ = true;
  args_left_ = count;
  bulk_len_ = -1;
  pos_ = scan_from_ = cr + 2;
  spans_.clear();
  return ParseResult::kCommand;
}

ParseResult RequestParser::ParseBulks(std::string_view data, size_t* consumed) {
  while (args_left_ > 0) {
    if (bulk_len_ < 0) {
      size_t cr = 0;
      int64_t len = 0;
      if (uint64_t plain = 0;
          ReadPlainHeader(data, pos_, '$', &cr, &plain) && cr - pos_ <= limits_.max_inline_len) {
        len = static_cast<int64_t>(plain);
      } else {
        const ParseResult found =
            FindHeaderEnd(data, "Protocol error: too big bulk count string", &cr);
        if (found != ParseResult::kCommand) return found;
        if (data[pos_] != '$') {
          return Fail(std::string("Protocol error: expected '$', got '") + data[pos_] + "'");
        }
        if (!ParseRedisInt64(data.substr(pos_ + 1, cr - pos_ - 1), &len) || len < 0) {
          return Fail("Protocol error: invalid bulk length");
        }
      }
      if (len > limits_.max_bulk_len) return Fail("Protocol error: invalid bulk length");
      if (limits_.unauthenticated && len > kUnauthenticatedMaxBulkLen) {
        return Fail("Protocol error: unauthenticated bulk length");
      }
      bulk_len_ = len;
      pos_ = scan_from_ = cr + 2;
    }
    // The two bytes after the payload are skipped unchecked, as Redis does.
    const size_t needed = static_cast<size_t>(bulk_len_) + 2;
    if (data.size() - pos_ < needed) return ParseResult::kNeedMore;
    spans_.emplace_back(pos_, static_cast<size_t>(bulk_len_));
    pos_ = scan_from_ = pos_ + needed;
    bulk_len_ = -1;
    --args_left_;
  }
  return Complete(data, pos_, consumed);
}

ParseResult RequestParser::FindHeaderEnd(std::string_view data, const char* too_big_error,
                                         size_t* cr) {
  size_t resume = 0;
  const size_t found = FindTerminator(data, scan_from_, '\r', &resume);
  if (found == kNotFound) {
    if (data.size() - pos_ > limits_.max_inline_len) return Fail(too_big_error);
    scan_from_ = resume;
    return ParseResult::kNeedMore;
  }
  if (found - pos_ > limits_.max_inline_len) return Fail(too_big_error);
  if (found + 1 >= data.size()) {  // the byte after '\r' (not checked to be '\n') is missing
    scan_from_ = found;
    return ParseResult::kNeedMore;
  }
  *cr = found;
  return ParseResult::kCommand;
}

ParseResult RequestParser::Fail(std::string_view message) {
  error_.assign(message);
  for (char& c : error_) {
    if (c == '\r' || c == '\n') c = ' ';  // Redis maps them to spaces in error replies
  }
  args_.clear();
  Reset();
  return ParseResult::kError;
}

ParseResult RequestParser::Complete(std::string_view base, size_t end, size_t* consumed) {
  args_.clear();
  for (const auto& [offset, length] : spans_) args_.push_back(base.substr(offset, length));
  *consumed = end;
  Reset();
  return ParseResult::kCommand;
}

}  // namespace sluice::protocol
