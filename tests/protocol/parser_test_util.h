// Helpers shared by the parser tests: drive a RequestParser the way a connection does and record
// what came out as owned strings (args() views die with the next Parse()).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "protocol/request_parser.h"

namespace sluice::protocol::testing {

using Command = std::vector<std::string>;

// What a byte stream produced: the commands, in order, and how the stream ended.
struct Outcome {
  std::vector<Command> commands;
  std::vector<size_t> consumed;  // bytes per command
  ParseResult last = ParseResult::kNeedMore;
  std::string error;    // after kError
  size_t leftover = 0;  // unconsumed bytes at the end (kNeedMore only)

  bool operator==(const Outcome&) const = default;
};

inline Command CopyArgs(const RequestParser& parser) {
  Command out;
  for (std::string_view arg : parser.args()) out.emplace_back(arg);
  return out;
}

// Parses every command in `buffer`; stops at kNeedMore or kError. Returns the result that
// stopped it and appends to `outcome`. Erases consumed bytes from the front of `buffer`.
inline ParseResult DrainBuffer(RequestParser& parser, std::string& buffer, Outcome& outcome) {
  while (true) {
    size_t consumed = 123;  // must be overwritten
    const ParseResult r = parser.Parse(buffer, &consumed);
    if (r != ParseResult::kCommand) {
      outcome.last = r;
      if (r == ParseResult::kError) outcome.error = parser.error();
      if (consumed != 0) outcome.error += " [consumed not zeroed]";
      // Only meaningful at the end of the stream: after an error the rest was never read.
      outcome.leftover = r == ParseResult::kNeedMore ? buffer.size() : 0;
      return r;
    }
    outcome.commands.push_back(CopyArgs(parser));
    outcome.consumed.push_back(consumed);
    buffer.erase(0, consumed);
  }
}

// Feeds `data` split at the given (sorted) offsets, as successive reads into one buffer.
inline Outcome FeedSplit(std::string_view data, const std::vector<size_t>& cuts,
                         ParserLimits limits = {}) {
  RequestParser parser(limits);
  Outcome outcome;
  std::string buffer;
  size_t from = 0;
  std::vector<size_t> ends = cuts;
  ends.push_back(data.size());
  for (size_t end : ends) {
    buffer.append(data.substr(from, end - from));
    from = end;
    if (DrainBuffer(parser, buffer, outcome) == ParseResult::kError) break;
  }
  return outcome;
}

inline Outcome FeedWhole(std::string_view data, ParserLimits limits = {}) {
  return FeedSplit(data, {}, limits);
}

inline Outcome FeedByteByByte(std::string_view data, ParserLimits limits = {}) {
  std::vector<size_t> cuts;
  for (size_t i = 1; i < data.size(); ++i) cuts.push_back(i);
  return FeedSplit(data, cuts, limits);
}

// The error text a single stream ends with ("" when it did not end in an error).
inline std::string ErrorOf(std::string_view data, ParserLimits limits = {}) {
  const Outcome outcome = FeedWhole(data, limits);
  return outcome.last == ParseResult::kError ? outcome.error : "";
}

}  // namespace sluice::protocol::testing
