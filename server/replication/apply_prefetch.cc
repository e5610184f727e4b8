#include "server/replication/apply_prefetch.h"

#include <charconv>
#include <span>

#include "server/core/command.h"
#include "server/core/key_access.h"

namespace sluice::server::replication {

namespace {

bool IsSelect(std::string_view name) {
  return name.size() == 6 && (name[0] | 0x20) == 's' && (name[1] | 0x20) == 'e' &&
         (name[2] | 0x20) == 'l' && (name[3] | 0x20) == 'e' && (name[4] | 0x20) == 'c' &&
         (name[5] | 0x20) == 't';
}

}  // namespace

void ApplyPrefetch::Flush(int db) {
  // A lone key gains nothing from overlapping (and the apply reads it right away).
  if (n_ >= 2) {
    store_.PrefetchKeys(db, std::span<const std::string_view>(keys_, n_));
    // OBJECT IDLETIME's clock: each applied command stamps its key (key_access.h).
    KeyAccessClock& clock = KeyAccess();
    for (size_t i = 0; i < n_; ++i) clock.Prefetch(db, keys_[i]);
  }
  n_ = 0;
}

void ApplyPrefetch::Before(std::string_view data, size_t pos, int db) {
  if (pos < until_) return;
  size_t at = pos;
  n_ = 0;
  parser_.Reset();  // a command cut short last time may start elsewhere now
  while (n_ < std::size(keys_) && at < data.size()) {
    size_t consumed = 0;
    const bool multibulk = data[at] == '*';
    if (parser_.Parse(data.substr(at), &consumed) != protocol::ParseResult::kCommand) break;
    at += consumed;
    // A multibulk command's arguments view `data`; an inline one's live in the parser until
    // its next Parse: not kept (the primary's stream is multibulk).
    if (!multibulk) continue;
    const Args args = parser_.args();
    if (args.empty()) continue;
    if (IsSelect(args[0]) && args.size() == 2) {
      int next = 0;
      auto [end, ec] = std::from_chars(args[1].data(), args[1].data() + args[1].size(), next);
      if (ec != std::errc() || next < 0 || next >= kNumDatabases) break;
      Flush(db);
      db = next;
      continue;
    }
    const CommandSpec* spec = dispatcher_.Resolve(args);
    if (spec == nullptr) continue;
    positions_.clear();
    CommandKeyPositions(*spec, args, &positions_);
    if (!positions_.empty()) keys_[n_++] = args[positions_.front()];
  }
  Flush(db);
  until_ = at > pos ? at : pos + 1;
}

}  // namespace sluice::server::replication
