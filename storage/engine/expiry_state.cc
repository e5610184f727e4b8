// Saving the active expiry cycle's state (at a clean close, and while the store is quiet) and
// restoring it at the next open (expiry_state.h): the due list, the pass hint and an unfinished
// pass's cursor, in one record of the `meta` column family. Without it every open starts a pass
// that walks the whole keyspace at Redis's sampling rate while it finds nothing expired: on a store
// of 10M keys that expire in hours, ~14 hours of a few percent of a core (docs/engine.md,
// "Expiry").
#include "expiry_state.h"

#include <algorithm>
#include <chrono>
#include <mutex>

#include "encoding.h"
#include "expiry.h"
#include "expiry_cycle.h"
#include "lock_pool.h"

namespace sluice {

namespace internal {

namespace {

constexpr char kStateVersion = 1;
// The fewest bytes one due-list key takes: its length (1), expiry (8) and exact flag (1).
constexpr size_t kMinKeyBytes = 10;

void AppendBytes(std::string* out, std::string_view bytes) {
  AppendVarint(out, bytes.size());
  out->append(bytes);
}

bool ReadBytes(std::string_view in, size_t* at, std::string* out) {
  uint64_t n = 0;
  if (!ReadVarint(in, at, &n) || n > in.size() - *at) return false;
  out->assign(in.substr(*at, n));
  *at += n;
  return true;
}

bool ReadFixed64(std::string_view in, size_t* at, uint64_t* v) {
  if (in.size() - *at < 8) return false;
  *v = DecodeFixed64(in.data() + *at);
  *at += 8;
  return true;
}

}  // namespace

std::string EncodeExpiryState(const ExpiryState& state) {
  std::string out;
  out.push_back(kStateVersion);
  AppendFixed64(&out, state.seq);
  AppendFixed64(&out, static_cast<uint64_t>(state.pass_due_ms));
  out.push_back(state.pass_active ? 1 : 0);
  AppendBytes(&out, state.pass_cursor);
  AppendBytes(&out, state.pass_done);
  AppendVarint(&out, state.due.size());
  for (const auto& k : state.due) {
    AppendBytes(&out, k.raw_key);
    AppendFixed64(&out, static_cast<uint64_t>(k.at_ms));
    out.push_back(k.exact ? 1 : 0);
  }
  return out;
}

std::optional<ExpiryState> DecodeExpiryState(std::string_view in) {
  ExpiryState state;
  size_t at = 1;
  uint64_t due_ms = 0;
  if (in.empty() || in[0] != kStateVersion || !ReadFixed64(in, &at, &state.seq) ||
      !ReadFixed64(in, &at, &due_ms) || at == in.size() || static_cast<uint8_t>(in[at]) > 1) {
    return std::nullopt;
  }
  state.pass_due_ms = static_cast<int64_t>(due_ms);
  state.pass_active = in[at++] == 1;
  uint64_t count = 0;
  if (!ReadBytes(in, &at, &state.pass_cursor) || !ReadBytes(in, &at, &state.pass_done) ||
      !ReadVarint(in, &at, &count) || count > (in.size() - at) / kMinKeyBytes) {
    return std::nullopt;  // a damaged count must not size a huge vector
  }
  state.due.resize(count);
  for (auto& k : state.due) {
    uint64_t at_ms = 0;
    if (!ReadBytes(in, &at, &k.raw_key) || !ReadFixed64(in, &at, &at_ms) || at == in.size() ||
        static_cast<uint8_t>(in[at]) > 1) {
      return std::nullopt;
    }
    k.at_ms = static_cast<int64_t>(at_ms);
    k.exact = in[at++] == 1;
  }
  if (at != in.size()) return std::nullopt;
  return state;
}

using internal::ExpiryState;

// The due list as one entry per key. An entry whose stripe was not written since it was seen
// says the key's stored expiry exactly (RemoveExpired's check); a key with none such was
// written since, and keeps its earliest entry, to be read again when due (a write that extended
// an expiry handed nothing to the cycle: that entry is what covers the new one). One entry per
// key, because a restored exact entry lets the cycle remove the key without a read, which
// RemoveExpired allows for only one entry per stored version. No reads: after heavy traffic
// every stripe has been written, and reading each key made a save of 262,144 entries cost 1.6 s
// of CPU. The expiry thread's (or, at close, the destructor's once that thread has stopped).
void ExpiryCycle::CollectDueKeys(std::vector<ExpiryState::Key>* out) {
  struct Seen {
    const std::string* key;
    int64_t at_ms;
    uint64_t seq;
  };
  std::vector<Seen> seen;
  seen.reserve(expiry_due_.size());
  expiry_due_.ForEach([&](const std::string& key, int64_t at_ms, uint64_t seq) {
    seen.push_back(Seen{&key, at_ms, seq});
  });
  std::sort(seen.begin(), seen.end(), [](const Seen& a, const Seen& b) { return *a.key < *b.key; });
  out->reserve(seen.size());
  for (size_t i = 0, j = 0; i < seen.size(); i = j) {
    const std::string& key = *seen[i].key;
    ExpiryState::Key k{key, seen[i].at_ms, false};
    std::lock_guard<std::mutex> stripe(engine_.locks().ForKey(key));
    const uint64_t mark = engine_.locks().WriteMark(key);
    for (j = i; j < seen.size() && *seen[j].key == key; ++j) {
      if (k.exact) continue;
      if (mark <= seen[j].seq) {
        k.at_ms = seen[j].at_ms;
        k.exact = true;
      } else {
        k.at_ms = std::min(k.at_ms, seen[j].at_ms);
      }
    }
    out->push_back(std::move(k));
  }
}

// The record is valid only at the sequence number its own write takes, which it names: the
// latest one read with every stripe held (no unit is then between its commit and the hand-off
// of its expiries: HandExpiries), plus one. A unit that commits after that read takes a number
// first, so the record names a number it does not get, or comes after it: either way no open
// trusts it, and nothing is lost but the walk it would have saved. A state that cannot be saved
// leaves any older record, stale once anything was written since. While running the record is
// handed to the OS (and synced under `always`; `everysec` syncs it within a second); at close
// the destructor's final log sync covers it.
void ExpiryCycle::SaveState(bool closing) {
  if (engine_.writes_refused()) return;
  uint64_t latest = 0;
  {
    auto all = internal::LockPool::MultiGuard::All(engine_.locks());
    latest = engine_.db()->GetLatestSequenceNumber();
    int64_t later = internal::kNever;
    TakeIntake(&later);
    NoteExpiry(later);
  }
  ExpiryState state;
  state.pass_due_ms = next_expiry_due_ms_.load(std::memory_order_relaxed);
  state.pass_active = expiry_pass_active_;
  if (expiry_pass_active_) {
    state.pass_cursor = expiry_cursor_;
    state.pass_done = expiry_done_;
  }
  CollectDueKeys(&state.due);
  state.seq = latest + 1;
  rocksdb::WriteBatch batch;
  if (!batch.Put(engine_.meta_cf(), internal::kExpiryStateKey, internal::EncodeExpiryState(state))
           .ok()) {
    return;
  }
  // Named before the write, so that the everysec thread never takes the write for activity
  // (TidyIfIdle); taken back if the write fails.
  const uint64_t before = expiry_state_seq_.exchange(state.seq, std::memory_order_relaxed);
  if (!engine_.Write(&batch, /*durable=*/!closing, /*defer=*/closing).ok()) {
    expiry_state_seq_.store(before, std::memory_order_relaxed);
  }
}

// The expiry thread's, after each cycle: once no write has come for quiet_save_after_ms_ (30 s),
// the state is saved, once per quiet spell and at most once per quiet_save_every_ms_ (10 min),
// so that a crash of an idle server (kill -9, a power cut) does not cost the next open a walk
// either. A save with a full due list costs ~0.3 s of CPU and a 10 MB record: a server whose
// writes come a few seconds apart must not pay that for each gap (its record would be stale by
// the next write anyway).
void ExpiryCycle::SaveStateWhenQuiet() {
  const uint64_t latest = engine_.db()->GetLatestSequenceNumber();
  const auto now = std::chrono::steady_clock::now();
  if (latest != quiet_seq_) {
    quiet_seq_ = latest;
    quiet_since_ = now;
    return;
  }
  const auto after =
      std::chrono::milliseconds(quiet_save_after_ms_.load(std::memory_order_relaxed));
  const auto every =
      std::chrono::milliseconds(quiet_save_every_ms_.load(std::memory_order_relaxed));
  if (now - quiet_since_ < after || latest == expiry_state_seq_.load(std::memory_order_relaxed) ||
      (last_quiet_save_ && now - *last_quiet_save_ < every)) {
    return;
  }
  last_quiet_save_ = now;
  SaveState(/*closing=*/false);
}

// At open, before anything is written and before the expiry thread starts. A record written
// before the store's latest write is stale (the store was opened and written since, then
// crashed or was closed by a build that does not save it): the first cycle then starts a pass.
void ExpiryCycle::RestoreState() {
  std::string bytes;
  if (!engine_.db()
           ->Get(rocksdb::ReadOptions(), engine_.meta_cf(), internal::kExpiryStateKey, &bytes)
           .ok())
    return;
  auto state = internal::DecodeExpiryState(bytes);
  const uint64_t seq = engine_.db()->GetLatestSequenceNumber();
  if (!state || state->seq != seq) {
    if (engine_.options().on_progress) {
      engine_.options().on_progress(
          "expiry: the saved expiry state is stale; walking the keyspace");
    }
    return;
  }
  // Every stripe counts as written at seq: an exact entry (seen at seq) is removed without a
  // read unless written after this open, any other (seen at seq - 1) is read again when due.
  engine_.locks().SetAllWriteMarks(seq);
  int64_t pass_due_ms = state->pass_due_ms;
  for (auto& k : state->due) {
    const int64_t dropped = expiry_due_.Add(std::move(k.raw_key), k.at_ms, k.exact ? seq : seq - 1);
    pass_due_ms = std::min(pass_due_ms, dropped);
  }
  if (state->pass_active) {
    // Every key before the cursor was read at seq at the latest; PassSees keeps the entries of
    // writes after this open for them.
    expiry_pass_active_ = true;
    expiry_cursor_ = std::move(state->pass_cursor);
    expiry_done_ = std::move(state->pass_done);
    pass_segments_.push_back(PassSegment{std::string(), seq});
  }
  next_expiry_due_ms_.store(pass_due_ms, std::memory_order_relaxed);
  // Nothing new to save until something is written.
  expiry_state_seq_.store(seq, std::memory_order_relaxed);
  if (engine_.options().on_progress) {
    engine_.options().on_progress("expiry: restored the saved state (" +
                                  std::to_string(state->due.size()) + " keys in the due list" +
                                  (state->pass_active ? ", a pass under way)" : ")"));
  }
}

}  // namespace internal
}  // namespace sluice
