// libFuzzer target for sluice::protocol::RequestParser.
//
// The input is a byte stream from a client. It is parsed twice: whole, and as a connection
// receives it, in pseudo-random chunks appended to a read buffer. Both must produce the same
// commands, the same byte counts and the same final state, and every command must re-parse to
// itself from just its own bytes. Any broken invariant aborts. The hash of the input picks the
// chunking and one of a few limit profiles, some tiny so the "too big" and limit errors are
// reachable with short inputs.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/request_parser.h"

namespace {

using sluice::protocol::ParseResult;
using sluice::protocol::ParserLimits;
using sluice::protocol::RequestParser;

using Command = std::vector<std::string>;

struct Outcome {
  std::vector<Command> commands;
  std::vector<size_t> consumed;
  ParseResult last = ParseResult::kNeedMore;
  std::string error;
  bool operator==(const Outcome&) const = default;
};

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "parser_fuzz: invariant broken: %s\n", what);
  std::abort();
}

void Require(bool ok, const char* what) {
  if (!ok) Fail(what);
}

uint64_t Fnv1a(std::string_view data) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : data) h = (h ^ c) * 1099511628211ull;
  return h;
}

ParserLimits LimitsFor(uint64_t profile) {
  ParserLimits limits;
  switch (profile % 4) {
    case 1:
      limits.max_inline_len = 24;
      limits.max_bulk_len = 40;
      limits.max_multibulk_len = 6;
      break;
    case 2:
      limits = sluice::protocol::UnauthenticatedLimits(limits);
      break;
    case 3:
      limits = sluice::protocol::UnauthenticatedLimits(limits);
      limits.max_inline_len = 7;
      break;
    default:
      break;
  }
  return limits;
}

Command Copy(const RequestParser& parser) {
  return Command(parser.args().begin(), parser.args().end());
}

// A command's own bytes, parsed by a fresh parser, must give the same command.
void CheckReparse(const ParserLimits& limits, std::string_view bytes, const Command& expected) {
  RequestParser fresh(limits);
  size_t consumed = 0;
  Require(fresh.Parse(bytes, &consumed) == ParseResult::kCommand, "prefix re-parse is a command");
  Require(consumed == bytes.size(), "prefix re-parse consumes the whole prefix");
  Require(Copy(fresh) == expected, "prefix re-parse gives the same args");
}

// Parses every command in `buffer`, erasing consumed bytes; returns false after an error.
bool Drain(RequestParser& parser, const ParserLimits& limits, std::string& buffer,
           Outcome& outcome) {
  while (true) {
    size_t consumed = 12345;
    const ParseResult r = parser.Parse(buffer, &consumed);
    if (r != ParseResult::kCommand) {
      Require(consumed == 0, "consumed is 0 without a command");
      outcome.last = r;
      if (r == ParseResult::kNeedMore) return true;
      outcome.error = parser.error();
      Require(outcome.error.starts_with("Protocol error: "), "error text prefix");
      Require(outcome.error.find_first_of("\r\n") == std::string::npos, "error has no CR/LF");
      return false;
    }
    Require(consumed > 0 && consumed <= buffer.size(), "0 < consumed <= size");
    const Command command = Copy(parser);
    CheckReparse(limits, std::string_view(buffer).substr(0, consumed), command);
    outcome.commands.push_back(command);
    outcome.consumed.push_back(consumed);
    buffer.erase(0, consumed);
  }
}

Outcome ParseInChunks(std::string_view data, const ParserLimits& limits, uint64_t seed) {
  RequestParser parser(limits);
  Outcome outcome;
  std::string buffer;
  size_t pos = 0;
  while (pos < data.size()) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    const size_t max_chunk = (seed >> 60) < 12 ? 8 : 512;
    const size_t chunk = 1 + (seed >> 33) % max_chunk;
    const size_t n = chunk < data.size() - pos ? chunk : data.size() - pos;
    buffer.append(data.substr(pos, n));
    pos += n;
    if (!Drain(parser, limits, buffer, outcome)) break;
  }
  return outcome;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  const std::string_view data(reinterpret_cast<const char*>(bytes), size);
  const uint64_t hash = Fnv1a(data);
  const ParserLimits limits = LimitsFor(hash);

  RequestParser parser(limits);
  Outcome whole;
  std::string buffer(data);
  Drain(parser, limits, buffer, whole);
  size_t total = 0;
  for (size_t c : whole.consumed) total += c;
  Require(total <= size, "total consumed <= size");

  const Outcome chunked = ParseInChunks(data, limits, hash >> 2);
  Require(chunked == whole, "chunked parse equals whole parse");
  return 0;
}
