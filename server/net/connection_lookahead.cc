// Connection's look-ahead: parses the pipelined commands ahead of the one running and
// prefetches their keys (and a hot collection's elements), so their cache misses overlap.
#include <algorithm>
#include <iterator>
#include <span>

#include "server/core/command.h"
#include "server/core/key_access.h"
#include "server/net/connection.h"
#include "sluice/prefetch.h"
#include "sluice/store.h"

namespace sluice::server {

namespace {

bool IsZAddFlag(std::string_view a) {
  for (std::string_view f : {"nx", "xx", "gt", "lt", "ch", "incr"}) {
    if (a.size() == f.size() &&
        std::equal(a.begin(), a.end(), f.begin(), [](char x, char y) { return (x | 0x20) == y; })) {
      return true;
    }
  }
  return false;
}

// The element (hash field, set or sorted-set member) a collection command looks up first, for
// the look-ahead's element prefetch; empty when the command has none.
std::string_view LookedUpElement(const CommandSpec& spec, const Args& args) {
  // Cheap for every other command: a first letter, then lengths before bytes.
  const std::string_view n = spec.name;
  if (args.size() < 3 || n.size() < 4 || (n[0] != 's' && n[0] != 'h' && n[0] != 'z')) return {};
  using namespace std::string_view_literals;
  if (n == "sadd"sv || n == "srem"sv || n == "sismember"sv || n == "hset"sv || n == "hget"sv ||
      n == "hdel"sv || n == "hexists"sv || n == "hsetnx"sv || n == "hincrby"sv || n == "zscore"sv ||
      n == "zrem"sv) {
    return args[2];
  }
  if (n == "zincrby"sv && args.size() >= 4) return args[3];
  if (n == "zadd"sv) {
    size_t i = 2;
    while (i < args.size() && IsZAddFlag(args[i])) ++i;
    if (i + 1 < args.size()) return args[i + 1];
  }
  return {};
}

}  // namespace

void Connection::PrefetchAhead(size_t offset) {
  // Commands with more arguments than this are parsed again by the command loop rather than
  // copied here; the look-ahead stops after kMaxCommands commands.
  constexpr size_t kMaxKeptArgs = 64;
  constexpr size_t kMaxCommands = 64;
  std::string_view keys[Store::kPrefetchKeys];
  ElementRef elements[Store::kPrefetchKeys];
  size_t n = 0;
  size_t n_elements = 0;
  size_t at = offset;
  ahead_.clear();
  ahead_args_.clear();
  ahead_next_ = 0;
  lookahead_.set_limits(parser_.limits());
  lookahead_.Reset();
  while (n < std::size(keys) && at < in_len_ && ahead_.size() < kMaxCommands) {
    size_t consumed = 0;
    const std::string_view pending(in_.data() + at, in_len_ - at);
    if (lookahead_.Parse(pending, &consumed) != protocol::ParseResult::kCommand) break;
    const size_t start = at;
    at += consumed;
    // A multibulk command's arguments are views into in_, which stays put for the batch; an
    // inline command's live in the parser, until its next Parse: not kept.
    if (pending[0] != '*') continue;
    const Args args = lookahead_.args();
    if (args.size() <= kMaxKeptArgs) {
      ahead_.push_back(ParsedAhead{start, consumed, ahead_args_.size(), args.size()});
      ahead_args_.insert(ahead_args_.end(), args.begin(), args.end());
    }
    const CommandSpec* spec = args.empty() ? nullptr : dispatcher_.Resolve(args);
    if (spec == nullptr) continue;
    key_positions_.clear();
    CommandKeyPositions(*spec, args, &key_positions_);
    if (key_positions_.empty()) continue;
    keys[n++] = args[key_positions_.front()];
    if (const std::string_view element = LookedUpElement(*spec, args); !element.empty()) {
      elements[n_elements++] = ElementRef{keys[n - 1], element};
    }
  }
  prefetched_until_ = std::max(at, offset + 1);
  if (n >= 2) {
    store_.PrefetchKeys(client_.db, std::span<const std::string_view>(keys, n));
    // OBJECT IDLETIME's clock: each command stamps its key once it ran (key_access.h).
    KeyAccessClock& clock = KeyAccess();
    for (size_t i = 0; i < n; ++i) clock.Prefetch(client_.db, keys[i]);
  }
  // A hot collection's elements (runs of commands on one key; PrefetchElements skips the rest).
  if (n_elements >= 2) {
    PrefetchElements(store_, client_.db, std::span<const ElementRef>(elements, n_elements));
  }
}

bool Connection::TakeParsedAhead(size_t offset, Args* args, size_t* consumed) {
  while (ahead_next_ < ahead_.size() && ahead_[ahead_next_].offset < offset) ++ahead_next_;
  if (ahead_next_ == ahead_.size() || ahead_[ahead_next_].offset != offset) return false;
  const ParsedAhead& p = ahead_[ahead_next_++];
  *args = Args(ahead_args_.data() + p.first_arg, p.n_args);
  *consumed = p.consumed;
  // The parser may hold the partial state of this same command from an earlier read.
  parser_.Reset();
  return true;
}

}  // namespace sluice::server
