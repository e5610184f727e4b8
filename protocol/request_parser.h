// Incremental RESP request parser: multibulk (`*N\r\n$len\r\n...`) and inline commands (with
// Redis's quoting rules). Bytes in, argument views out; no I/O.
//
// Usage: the connection keeps a read buffer; after each read it calls Parse() repeatedly on the
// unconsumed bytes. Each kCommand result exposes args() and how many bytes the command took;
// the caller drops those bytes once it is done with args(). kNeedMore keeps no references to
// the data: call again with the same bytes plus whatever arrived since.
//
// args() are views into the caller's buffer for multibulk commands (zero-copy) and into the
// parser's own storage for inline commands (which may need unescaping); they stay valid until
// the next Parse() call or until the caller changes the buffer. Not thread-safe: one per
// connection.
//
// Redis 7.0 compatibility (checked against redis-server 7.0.15 over a raw socket):
// - A command with zero args is returned as kCommand with empty args() and must be ignored by
//   the caller: `*0\r\n`, `*-1\r\n` (any count <= 0) and an inline line with no words.
// - Like Redis, the byte after a header's '\r' and the two bytes after a bulk payload are
//   skipped without checking that they are "\r\n".
// - Like Redis (which searches with strchr), a NUL byte before the end of a header or inline
//   line hides the terminator: the parser waits until more than max_inline_len bytes are
//   pending and then reports the "too big" error.
// - Results never depend on how the bytes were split across reads: a header or inline line
//   longer than max_inline_len is an error even if its terminator arrived in the same read
//   (Redis reads 16KB at a time, so it would have seen the overlong prefix first).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::protocol {

// Redis's stricter limits for a client that has not authenticated while a password is set.
inline constexpr int64_t kUnauthenticatedMaxMultibulkLen = 10;
inline constexpr int64_t kUnauthenticatedMaxBulkLen = 16384;

// Redis's limits. Defaults are Redis 7's.
struct ParserLimits {
  int64_t max_bulk_len = 512LL * 1024 * 1024;  // proto-max-bulk-len
  // Arguments per command. Redis 7.0 accepts up to INT_MAX (Redis 6 capped it at 1024*1024).
  int64_t max_multibulk_len = 2147483647;
  size_t max_inline_len = 64 * 1024;  // PROTO_INLINE_MAX_SIZE; also caps header lines
  // When set, counts above kUnauthenticatedMaxMultibulkLen and bulk lengths above
  // kUnauthenticatedMaxBulkLen fail with Redis's "unauthenticated ..." errors (checked after
  // the limits above, as Redis does).
  bool unauthenticated = false;
};

// `base` with `unauthenticated` set.
ParserLimits UnauthenticatedLimits(const ParserLimits& base);

enum class ParseResult {
  kNeedMore,  // no complete command yet
  kCommand,   // one command parsed (possibly with zero args: see above; the caller skips it)
  kError,     // protocol error: reply "-ERR " + error() and close the connection
};

class RequestParser {
 public:
  explicit RequestParser(ParserLimits limits = {});
  // Takes effect from the next header parsed; call between commands (e.g. after AUTH).
  void set_limits(const ParserLimits& limits) { limits_ = limits; }
  const ParserLimits& limits() const { return limits_; }

  // Parses at most one command from the start of `data`. On kCommand, *consumed is the
  // command's length in bytes. On kNeedMore and kError, *consumed is 0.
  // After kNeedMore, `data` in the next call must start with the same bytes (the parser resumes
  // where it stopped instead of re-scanning); call Reset() before passing unrelated data.
  // After kCommand or kError the parser is ready for a fresh command.
  ParseResult Parse(std::string_view data, size_t* consumed);

  // Forgets a partially parsed command.
  void Reset();

  std::span<const std::string_view> args() const { return args_; }
  // After kError: e.g. "Protocol error: invalid bulk length" (Redis's text, without "ERR ").
  // Never contains CR or LF.
  const std::string& error() const { return error_; }

 private:
  // Byte range of one argument, relative to the start of the command's data.
  using Span = std::pair<size_t, size_t>;  // offset, length

  ParseResult ParseInline(std::string_view data, size_t* consumed);
  ParseResult ParseMultibulk(std::string_view data, size_t* consumed);
  ParseResult ParseMultibulkHeader(std::string_view data, size_t* consumed);
  ParseResult ParseBulks(std::string_view data, size_t* consumed);
  // Finds the '\r' ending the header line that starts at pos_. Returns kCommand when found (its
  // offset in *cr, with the byte after it present), otherwise kNeedMore or kError (too big).
  ParseResult FindHeaderEnd(std::string_view data, const char* too_big_error, size_t* cr);
  ParseResult Fail(std::string_view message);
  ParseResult Complete(std::string_view data, size_t end, size_t* consumed);

  ParserLimits limits_;
  std::vector<std::string_view> args_;
  std::vector<Span> spans_;   // spans of the command being parsed (reused, never shrunk)
  std::string inline_bytes_;  // unescaped inline arguments, back to back (reused)
  std::string error_;

  // Resume point for a command that arrived in pieces, so long commands are not re-scanned from
  // the start on every read. All offsets are relative to the start of the command.
  bool in_multibulk_ = false;  // the '*' header was parsed; bulks are being read
  size_t pos_ = 0;             // start of the next unparsed element
  size_t scan_from_ = 0;       // where the search for the current line's terminator resumes
  int64_t args_left_ = 0;      // bulks still to read
  int64_t bulk_len_ = -1;      // length of the current bulk once its header is parsed
};

}  // namespace sluice::protocol
