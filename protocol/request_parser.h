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
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::protocol {

// Redis's limits. Defaults are Redis 7's.
struct ParserLimits {
  int64_t max_bulk_len = 512LL * 1024 * 1024;  // proto-max-bulk-len
  int64_t max_multibulk_len = 1024 * 1024;     // arguments per command
  size_t max_inline_len = 64 * 1024;           // PROTO_INLINE_MAX_SIZE
};

// Redis's stricter limits for a client that has not authenticated while a password is set.
ParserLimits UnauthenticatedLimits(const ParserLimits& base);

enum class ParseResult {
  kNeedMore,  // no complete command yet
  kCommand,   // one command parsed (possibly with zero args: an empty inline line is skipped)
  kError,     // protocol error: reply "-ERR " + error() and close the connection
};

class RequestParser {
 public:
  explicit RequestParser(ParserLimits limits = {});
  void set_limits(const ParserLimits& limits) { limits_ = limits; }
  const ParserLimits& limits() const { return limits_; }

  // Parses at most one command from the start of `data`. On kCommand, *consumed is the
  // command's length in bytes. On kNeedMore and kError, *consumed is 0.
  ParseResult Parse(std::string_view data, size_t* consumed);

  std::span<const std::string_view> args() const { return args_; }
  // After kError: e.g. "Protocol error: invalid bulk length" (Redis's text, without "ERR ").
  const std::string& error() const { return error_; }

 private:
  ParserLimits limits_;
  std::vector<std::string_view> args_;
  std::vector<std::string> inline_storage_;
  std::string error_;
  // Resume point for a large multibulk command that arrived in pieces, so long commands are not
  // re-scanned from the start on every read.
  size_t resume_offset_ = 0;
  size_t resume_args_ = 0;
  int64_t resume_count_ = -1;
};

}  // namespace sluice::protocol
