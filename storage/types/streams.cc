// Stream commands' operations (Redis 7.0 semantics) over the stream layout (stream.h): XADD,
// XRANGE/XREVRANGE, XLEN, XDEL, XTRIM, XSETID, and what XREAD and XINFO STREAM read.
#include <utility>

#include "sluice/transaction.h"
#include "store_impl.h"
#include "stream.h"
#include "txn.h"

namespace sluice {

using internal::Stream;

namespace {

// The ID XADD gives the new entry, or the outcome that refuses it (streamAppendItem).
StreamAddReply::Outcome NextId(const internal::StreamState& st, const StreamAddOptions& o,
                               int64_t now_ms, StreamId* id) {
  using O = StreamAddReply::Outcome;
  if (st.last_id == StreamId::Max()) return O::kExhausted;
  switch (o.mode) {
    case StreamAddOptions::IdMode::kExplicit:
      *id = o.id;
      break;
    case StreamAddOptions::IdMode::kAutoSeq:
      if (st.last_id.ms == o.id.ms) {
        if (st.last_id.seq == std::numeric_limits<uint64_t>::max()) return O::kIdTooSmall;
        *id = {o.id.ms, st.last_id.seq + 1};
      } else {
        *id = {o.id.ms, 0};
      }
      break;
    case StreamAddOptions::IdMode::kAuto: {
      const auto ms = static_cast<uint64_t>(now_ms);
      if (ms > st.last_id.ms) {
        *id = {ms, 0};
      } else {
        *id = st.last_id;
        id->Increment();
      }
      break;
    }
  }
  return *id > st.last_id ? O::kAdded : O::kIdTooSmall;
}

StreamTrimOutcome TrimOutcome(const internal::StreamState& st, int64_t removed) {
  return {removed, st.length, st.length > 0 ? st.first_id : StreamId{}, st.last_id};
}

}  // namespace

Result<StreamAddReply> Store::Transaction::XAdd(int db, std::string_view key,
                                                const StreamAddOptions& options,
                                                std::span<const std::string_view> fields) {
  auto s = Stream::Open(*txn_, db, key, /*write=*/true);
  if (!s.ok()) return s.status();
  StreamAddReply reply{StreamAddReply::Outcome::kNoStream, {}, {}};
  if (!s->exists() && options.no_mkstream) return reply;
  s->Create();
  reply.outcome = NextId(s->state(), options, NowMs(), &reply.id);
  // A refused ID needs a stream with entries (a new one's last ID is 0-0, below any ID the
  // server lets through), so nothing is staged then.
  if (reply.outcome != StreamAddReply::Outcome::kAdded) return reply;
  if (Status st = s->Append(reply.id, fields); !st.ok()) return st;
  auto t = s->Trim(options.trim);
  if (!t.ok()) return t.status();
  s->Save();
  reply.trim = TrimOutcome(s->state(), *t);
  return reply;
}

Result<std::vector<StreamEntry>> Store::Transaction::XRange(int db, std::string_view key,
                                                            StreamId start, StreamId end, bool rev,
                                                            int64_t count) {
  auto s = Stream::Open(*txn_, db, key, /*write=*/false);
  if (!s.ok()) return s.status();
  std::vector<StreamEntry> out;
  if (Status st = s->Range(start, end, rev, count, &out); !st.ok()) return st;
  return out;
}

Result<int64_t> Store::Transaction::XLen(int db, std::string_view key) {
  auto s = Stream::Open(*txn_, db, key, /*write=*/false);
  if (!s.ok()) return s.status();
  return s->exists() ? s->state().length : 0;
}

Result<int64_t> Store::Transaction::XDel(int db, std::string_view key,
                                         std::span<const StreamId> ids) {
  auto s = Stream::Open(*txn_, db, key, /*write=*/true);
  if (!s.ok()) return s.status();
  if (!s->exists()) return int64_t{0};
  int64_t deleted = 0;
  bool first_gone = false;
  auto& st = s->state();
  for (StreamId id : ids) {
    bool gone = false;
    if (Status e = s->Delete(id, &gone); !e.ok()) return e;
    if (!gone) continue;
    first_gone = first_gone || id == st.first_id;
    if (id > st.max_deleted_id) st.max_deleted_id = id;
    ++deleted;
  }
  if (deleted == 0) return deleted;
  if (st.length == 0) {
    st.first_id = StreamId{};
  } else if (first_gone) {
    std::vector<StreamEntry> first;
    if (Status e = s->Range(StreamId{}, StreamId::Max(), false, 1, &first); !e.ok()) return e;
    if (!first.empty()) st.first_id = first[0].id;
  }
  s->Save();
  return deleted;
}

Result<StreamTrimOutcome> Store::Transaction::XTrim(int db, std::string_view key,
                                                    const StreamTrim& trim) {
  auto s = Stream::Open(*txn_, db, key, /*write=*/true);
  if (!s.ok()) return s.status();
  if (!s->exists()) return StreamTrimOutcome{};
  auto removed = s->Trim(trim);
  if (!removed.ok()) return removed.status();
  if (*removed > 0) s->Save();
  return TrimOutcome(s->state(), *removed);
}

Result<StreamError> Store::Transaction::XSetId(int db, std::string_view key,
                                               const StreamSetIdOptions& o) {
  auto s = Stream::Open(*txn_, db, key, /*write=*/true);
  if (!s.ok()) return s.status();
  if (!s->exists()) return StreamError::kNoKey;
  auto& st = s->state();
  if (st.length > 0) {
    // The new last ID may not be below the stream's last entry.
    std::vector<StreamEntry> last;
    if (Status e = s->Range(StreamId{}, StreamId::Max(), true, 1, &last); !e.ok()) return e;
    if (!last.empty() && o.last_id < last[0].id) return StreamError::kSetIdSmallerThanTop;
    if (o.entries_added && st.length > *o.entries_added) return StreamError::kSetIdEntriesAdded;
  }
  st.last_id = o.last_id;
  if (o.entries_added) st.entries_added = static_cast<uint64_t>(*o.entries_added);
  if (o.max_deleted_id) st.max_deleted_id = *o.max_deleted_id;
  s->Save();
  return StreamError::kNone;
}

Result<std::optional<StreamInfo>> Store::Transaction::XInfoStream(int db, std::string_view key) {
  auto s = Stream::Open(*txn_, db, key, /*write=*/false);
  if (!s.ok()) return s.status();
  if (!s->exists()) return std::optional<StreamInfo>();
  const auto& st = s->state();
  return std::optional<StreamInfo>(StreamInfo{.length = st.length,
                                              .last_id = st.last_id,
                                              .max_deleted_id = st.max_deleted_id,
                                              .first_id = st.first_id,
                                              .entries_added = st.entries_added,
                                              .groups = st.groups,
                                              .nodes = st.nodes});
}

}  // namespace sluice
