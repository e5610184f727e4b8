// Stream operations on Store::Transaction (storage/types/stream*.cc): IDs and metadata, node
// boundaries behind approximate trims, groups and their pending entries, and that all of it
// survives a reopen of the store.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "deletions_skipped.h"
#include "memtable.h"
#include "rocksdb/perf_context.h"
#include "rocksdb/perf_level.h"
#include "sluice/transaction.h"
#include "test_util.h"

namespace sluice::testing {

namespace {
using SV = std::string_view;
using Txn = Store::Transaction;

StreamAddOptions At(uint64_t ms, uint64_t seq) {
  StreamAddOptions o;
  o.mode = StreamAddOptions::IdMode::kExplicit;
  o.id = {ms, seq};
  return o;
}

// MAXLEN [~] n [LIMIT limit] (designated initializers that skip min_id draw GCC's
// -Wmissing-field-initializers).
StreamTrim MaxLen(int64_t n, bool approx, int64_t limit = 0) {
  StreamTrim t;
  t.by = StreamTrim::By::kMaxLen;
  t.approx = approx;
  t.max_len = n;
  t.limit = limit;
  return t;
}

StreamClaimOptions JustId(bool force) {
  StreamClaimOptions o;
  o.force = force;
  o.justid = true;
  return o;
}

// Stream "s" with entries 1-0 .. n-0 and group "g" from the start, committed.
void FillWithGroup(Fixture& f, uint64_t n) {
  const SV fields[] = {"f", "v"};
  Txn t(*f.store, {});
  for (uint64_t ms = 1; ms <= n; ++ms) REQUIRE(t.XAdd(0, "s", At(ms, 0), fields).ok());
  REQUIRE(*t.XGroupCreate(0, "s", "g", StreamId{}, false, -1) == StreamError::kNone);
  REQUIRE(t.Commit().ok());
}

std::vector<StreamId> Ids(const std::vector<StreamEntry>& entries) {
  std::vector<StreamId> out;
  for (const auto& e : entries) out.push_back(e.id);
  return out;
}

// Cuts the stream's group record back to the 40 bytes that builds before the PEL watermark
// wrote (the store closed meanwhile).
void WriteGroupRecordWithoutWatermark(Fixture& f, SV key, SV group) {
  f.store.reset();
  {
    RawStoreDb raw(f.dir.path(), f.clock);
    std::string value;
    REQUIRE(raw->Get(rocksdb::ReadOptions(), internal::EncodeKey(0, key), &value).ok());
    auto entry = internal::DecodeValue(value);
    REQUIRE(entry.has_value());
    auto meta = internal::DecodeMeta(entry->payload);
    REQUIRE(meta.has_value());
    std::string sub;
    internal::EncodeSubKeyPrefix(0, key, meta->version, &sub);
    sub.append("g").append(group);
    std::string record;
    REQUIRE(raw->Get(rocksdb::ReadOptions(), raw.cf("stream"), sub, &record).ok());
    REQUIRE(record.size() == 72);
    REQUIRE(raw->Put(rocksdb::WriteOptions(), raw.cf("stream"), sub, record.substr(0, 40)).ok());
  }
  f.store = OpenStore(f.dir.path(), f.clock);
}

// A new delivery of an entry already pending (a forced claim put it there ahead of the group,
// or the group was moved back) takes the pending entry over instead of adding a second one,
// whether the group's record knows its PEL watermark or not (`legacy`: written before it).
void CheckDeliveryOfPendingEntries(bool legacy) {
  CAPTURE(legacy);
  Fixture f;
  const SV fields[] = {"f", "v"};
  {
    Txn t(*f.store, {});
    for (uint64_t ms = 1; ms <= 4; ++ms) REQUIRE(t.XAdd(0, "s", At(ms, 0), fields).ok());
    REQUIRE(*t.XGroupCreate(0, "s", "g", StreamId{}, false, -1) == StreamError::kNone);
    REQUIRE(t.Commit().ok());
  }
  if (legacy) WriteGroupRecordWithoutWatermark(f, "s", "g");
  Txn t(*f.store, {});
  StreamClaimOptions force = JustId(true);
  const StreamId ahead[] = {{3, 0}};
  CHECK(Ids(t.XClaim(0, "s", "g", "bob", ahead, force)->claimed) == std::vector<StreamId>{{3, 0}});
  const std::vector<StreamId> all{{1, 0}, {2, 0}, {3, 0}, {4, 0}};
  auto read = t.XReadGroup(0, "s", "g", "alice", std::nullopt, 10, false);
  REQUIRE((read.ok() && read->has_value()));
  CHECK(Ids(**read) == all);
  auto summary = t.XPendingSummary(0, "s", "g");
  CHECK(summary->count == 4);
  CHECK(summary->consumers == std::vector<std::pair<std::string, int64_t>>{{"alice", 4}});
  REQUIRE(t.XGroupSetId(0, "s", "g", StreamId{}, -1).ok());
  read = t.XReadGroup(0, "s", "g", "carol", std::nullopt, 10, false);
  REQUIRE((read.ok() && read->has_value()));
  CHECK(Ids(**read) == all);
  summary = t.XPendingSummary(0, "s", "g");
  CHECK(summary->count == 4);
  CHECK(summary->consumers == std::vector<std::pair<std::string, int64_t>>{{"carol", 4}});
  auto pending = t.XPendingRange(0, "s", "g", 0, StreamId{}, StreamId::Max(), 10, std::nullopt);
  REQUIRE(pending->size() == 4);
  for (const StreamPendingEntry& p : *pending) CHECK(p.delivery_count == 1);
  REQUIRE(t.Commit().ok());
}
}  // namespace

TEST_CASE("stream IDs as text: in place and as a string, up to the largest") {
  CHECK(std::string_view(StreamId{0, 0}.ToText()) == "0-0");
  CHECK(std::string_view(StreamId{1796289605123, 12}.ToText()) == "1796289605123-12");
  CHECK(StreamId{1796289605123, 12}.ToString() == "1796289605123-12");
  CHECK(std::string_view(StreamId::Max().ToText()) == "18446744073709551615-18446744073709551615");
}

TEST_CASE("stream: append, refuse a smaller ID, range both ways, delete, metadata") {
  Fixture f;
  {
    Txn t(*f.store, {});
    const SV fields[] = {"f", "v"};
    for (uint64_t ms = 1; ms <= 5; ++ms) {
      auto r = t.XAdd(0, "s", At(ms, 0), fields);
      REQUIRE(r.ok());
      CHECK(r->outcome == StreamAddReply::Outcome::kAdded);
    }
    CHECK(t.XAdd(0, "s", At(5, 0), fields)->outcome == StreamAddReply::Outcome::kIdTooSmall);
    CHECK(Ids(*t.XRange(0, "s", {2, 0}, {4, 0}, false, 0)) ==
          std::vector<StreamId>{{2, 0}, {3, 0}, {4, 0}});
    CHECK(Ids(*t.XRange(0, "s", {0, 0}, StreamId::Max(), true, 2)) ==
          std::vector<StreamId>{{5, 0}, {4, 0}});
    const StreamId gone[] = {{1, 0}, {3, 0}, {9, 0}};
    CHECK(*t.XDel(0, "s", gone) == 2);
    auto info = t.XInfoStream(0, "s");
    REQUIRE(info->has_value());
    CHECK((*info)->length == 3);
    CHECK((*info)->first_id == StreamId{2, 0});
    CHECK((*info)->max_deleted_id == StreamId{3, 0});
    CHECK((*info)->entries_added == 5);
    REQUIRE(t.Commit().ok());
  }  // the unit lets its locks go before the store closes
  f.Reopen();
  Txn again(*f.store, {});
  CHECK(*again.XLen(0, "s") == 3);
  CHECK((*again.XInfoStream(0, "s"))->last_id == StreamId{5, 0});
}

TEST_CASE("stream: ~ trims whole nodes of 100 entries, = trims exactly, LIMIT caps the work") {
  Fixture f;
  Txn t(*f.store, {});
  const SV fields[] = {"f", "v"};
  for (uint64_t ms = 1; ms <= 350; ++ms) REQUIRE(t.XAdd(0, "s", At(ms, 0), fields).ok());
  CHECK((*t.XInfoStream(0, "s"))->nodes == 4);
  StreamTrim approx = MaxLen(120, true, 100);
  auto trimmed = t.XTrim(0, "s", approx);
  CHECK(trimmed->removed == 100);  // the LIMIT stops before the second node
  CHECK(trimmed->length == 250);   // what a replica is sent: MAXLEN = 250
  approx.limit = 0;
  trimmed = t.XTrim(0, "s", approx);
  CHECK(trimmed->removed == 100);
  CHECK(trimmed->length == 150);
  CHECK(trimmed->first_id == StreamId{201, 0});
  CHECK(trimmed->last_id == StreamId{350, 0});
  trimmed = t.XTrim(0, "s", approx);  // the first node cannot go whole: nothing removed
  CHECK(trimmed->removed == 0);
  CHECK(trimmed->length == 150);
  StreamTrim exact{.by = StreamTrim::By::kMinId, .min_id = {260, 0}};
  trimmed = t.XTrim(0, "s", exact);
  CHECK(trimmed->removed == 59);
  CHECK(trimmed->first_id == StreamId{260, 0});
  CHECK((*t.XInfoStream(0, "s"))->first_id == StreamId{260, 0});
  // XADD reports its own trimming the same way.
  StreamAddOptions capped = At(351, 0);
  capped.trim = MaxLen(10, false);
  auto added = t.XAdd(0, "s", capped, fields);
  CHECK(added->trim.removed == 82);
  CHECK(added->trim.length == 10);
  CHECK(added->trim.first_id == StreamId{342, 0});
  CHECK(*t.XTrim(0, "missing", exact) == StreamTrimOutcome{});
}

// A capped stream's approximate MAXLEN trim rarely removes anything (BullMQ trims its event
// stream on every job): once a trim has read the first node, the stream keeps a lower bound of
// its live entries, and a trim that even that bound shows cannot remove the node whole does not
// read it again. RocksDB's perf context counts the memtable lookups of each unit.
TEST_CASE("stream: an approximate MAXLEN trim that cannot remove the first node does not read it") {
  Fixture f;
  const SV fields[] = {"f", "v"};
  {
    Txn t(*f.store, {});
    for (uint64_t ms = 1; ms <= 250; ++ms) REQUIRE(t.XAdd(0, "s", At(ms, 0), fields).ok());
    REQUIRE(t.Commit().ok());  // nodes of 100, 100 and 50 entries
  }
  const auto lookups = [&](auto op) {
    Txn t(*f.store, {});
    rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
    rocksdb::get_perf_context()->Reset();
    const uint64_t newest_before = internal::NewestMemTableReadsOnThisThread();
    op(t);
    const uint64_t n = rocksdb::get_perf_context()->get_from_memtable_count +
                       internal::NewestMemTableReadsOnThisThread() - newest_before;
    rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);
    REQUIRE(t.Commit().ok());
    return n;
  };
  const uint64_t open = lookups([](Txn& t) { CHECK(*t.XLen(0, "s") == 250); });
  const StreamTrim keep = MaxLen(200, true);
  const auto trim_keeps = [&](Txn& t) { CHECK(t.XTrim(0, "s", keep)->removed == 0); };
  // Not known yet: the trim reads the first node (250 - 100 < 200 keeps it). A trim that
  // removes nothing writes nothing, so it does not keep what it learned.
  CHECK(lookups(trim_keeps) == open + 1);
  CHECK(lookups(trim_keeps) == open + 1);
  // XADD's trim reads it too (and the tail node) and saves the bound with the stream.
  StreamAddOptions add = At(251, 0);
  add.trim = keep;
  CHECK(lookups([&](Txn& t) { CHECK(t.XAdd(0, "s", add, fields)->trim.removed == 0); }) ==
        open + 2);
  CHECK(lookups(trim_keeps) == open);
  add.id = {252, 0};
  CHECK(lookups([&](Txn& t) { CHECK(t.XAdd(0, "s", add, fields)->trim.removed == 0); }) ==
        open + 1);  // the tail node only
  // A trim the bound does not rule out reads the node, removes it, then reads the next one,
  // which stays (152 - 100 < 150): its bound is saved with the trim.
  const StreamTrim cut = MaxLen(150, true);
  CHECK(lookups([&](Txn& t) { CHECK(t.XTrim(0, "s", cut)->removed == 100); }) > open);
  CHECK(lookups([&](Txn& t) { CHECK(t.XTrim(0, "s", cut)->removed == 0); }) == open);
  // An XDEL may have taken an entry of the first node: the bound is dropped.
  CHECK(lookups([](Txn& t) {
          const StreamId gone[] = {{150, 0}};
          CHECK(*t.XDel(0, "s", gone) == 1);
        }) > open);
  CHECK(lookups([&](Txn& t) { CHECK(t.XTrim(0, "s", cut)->removed == 0); }) == open + 1);
  // Exact trims still trim exactly.
  const StreamTrim exact = MaxLen(100, false);
  CHECK(lookups([&](Txn& t) { CHECK(t.XTrim(0, "s", exact)->removed == 51); }) > open);
  Txn t(*f.store, {});
  CHECK(t.XRange(0, "s", {0, 0}, StreamId::Max(), false, 1)->front().id == StreamId{153, 0});
}

// A long-lived capped stream (BullMQ's event stream: XADD then XTRIM MAXLEN ~ on every event)
// leaves the trimmed entries' and nodes' tombstones before its head until compaction. A trim, a
// range from "-" and an XDEL of the first entry must start at the head, not step over them: the
// RocksDB perf context counts the deleted keys an operation skipped.
TEST_CASE("stream: trims and reads from the head skip no tombstones of earlier trims") {
  Fixture f;
  const SV fields[] = {"f", "v"};
  const StreamTrim cap = MaxLen(1000, true);
  uint64_t ms = 0;
  for (int round = 0; round < 20; ++round) {
    Txn t(*f.store, {});
    for (int i = 0; i < 1000; ++i) {
      REQUIRE(t.XAdd(0, "s", At(++ms, 0), fields).ok());
      if (i % 100 == 99) REQUIRE(t.XTrim(0, "s", cap).ok());
    }
    REQUIRE(t.Commit().ok());
  }
  Txn t(*f.store, {});
  CHECK(*t.XLen(0, "s") <= 1100);
  // 19,000 entries and 190 nodes were trimmed before the head.
  CHECK(DeletionsSkippedBy([&] {
          for (int i = 0; i < 100; ++i) REQUIRE(t.XAdd(0, "s", At(++ms, 0), fields).ok());
          CHECK(t.XTrim(0, "s", cap)->removed == 100);
        }) <= 200);  // the node just removed: its 100 entries and its record
  CHECK(DeletionsSkippedBy([&] {
          CHECK(t.XRange(0, "s", {0, 0}, StreamId::Max(), false, 1)->size() == 1);
        }) == 0);
  const StreamId head = (*t.XInfoStream(0, "s"))->first_id;
  CHECK(DeletionsSkippedBy([&] {
          const StreamId gone[] = {head};
          CHECK(*t.XDel(0, "s", gone) == 1);
        }) <= 2);
  CHECK((*t.XInfoStream(0, "s"))->first_id == StreamId{head.ms + 1, 0});
  // The head node no longer starts at first_id: the trim finds it through the iterator.
  CHECK(DeletionsSkippedBy([&] {
          for (int i = 0; i < 100; ++i) REQUIRE(t.XAdd(0, "s", At(++ms, 0), fields).ok());
          CHECK(t.XTrim(0, "s", cap)->removed == 99);
        }) <= 200);
}

// One trim that removes several nodes (a capped stream that grew past its cap by more than a
// node, as a queue's event stream does when a worker's scripts add events faster than the cap's
// node): after the first node goes, the next one is found past it, not by a walk back over the
// tombstones of every node trimmed before.
TEST_CASE("stream: a trim of several nodes skips no tombstones of earlier trims") {
  Fixture f;
  const SV fields[] = {"f", "v"};
  const StreamTrim cap = MaxLen(1000, true);
  uint64_t ms = 0;
  {
    Txn t(*f.store, {});
    for (int i = 0; i < 20000; ++i) {
      REQUIRE(t.XAdd(0, "s", At(++ms, 0), fields).ok());
      if (i % 100 == 99) REQUIRE(t.XTrim(0, "s", cap).ok());
    }
    REQUIRE(t.Commit().ok());
  }
  Txn t(*f.store, {});
  for (int i = 0; i < 300; ++i) REQUIRE(t.XAdd(0, "s", At(++ms, 0), fields).ok());
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
  rocksdb::get_perf_context()->Reset();
  CHECK(t.XTrim(0, "s", cap)->removed == 300);
  // Keys stepped over, live or deleted (4,068 when the walk went back over the earlier trims).
  const uint64_t stepped = rocksdb::get_perf_context()->internal_key_skipped_count;
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);
  CHECK(stepped <= 600);  // the three nodes just removed: their entries and records
  CHECK(*t.XLen(0, "s") == 1000);
  CHECK((*t.XInfoStream(0, "s"))->first_id == StreamId{ms - 999, 0});
  CHECK(t.XRange(0, "s", {0, 0}, StreamId::Max(), false, 1)->front().id == StreamId{ms - 999, 0});
}

// A consumer that reads and acknowledges leaves its group's and its own pending records'
// tombstones behind until compaction; a read of the next entry and the lookup of its new pending
// record (what replication propagates) must stop at their own element prefix, not walk over them.
TEST_CASE("stream groups: read + ack skips no tombstones of earlier acks") {
  Fixture f;
  FillWithGroup(f, 3000);
  for (int round = 0; round < 20; ++round) {  // 2,000 entries read and acknowledged
    Txn t(*f.store, {});
    for (int i = 0; i < 100; ++i) {
      auto read = t.XReadGroup(0, "s", "g", "alice", std::nullopt, 1, false);
      REQUIRE((read.ok() && read->has_value() && (*read)->size() == 1));
      const StreamId id[] = {(*read)->front().id};
      REQUIRE(*t.XAck(0, "s", "g", id) == 1);
    }
    REQUIRE(t.Commit().ok());
  }
  Txn t(*f.store, {});
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
  rocksdb::get_perf_context()->Reset();
  auto read = t.XReadGroup(0, "s", "g", "alice", std::nullopt, 1, false);
  REQUIRE((read.ok() && read->has_value() && (*read)->size() == 1));
  const StreamId id = (*read)->front().id;
  CHECK(t.XPendingRange(0, "s", "g", 0, id, id, 1, std::nullopt)->size() == 1);
  CHECK(t.XPendingRange(0, "s", "g", 0, id, id, 1, SV("alice"))->size() == 1);
  const StreamId ack[] = {id};
  CHECK(*t.XAck(0, "s", "g", ack) == 1);
  const uint64_t skipped = rocksdb::get_perf_context()->internal_delete_skipped_count;
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);
  CHECK(id == StreamId{2001, 0});
  CHECK(skipped <= 10);  // 2,000 group and 2,000 consumer records were erased before it
}

// Walks of the PEL from its start (XAUTOCLAIM 0-0, XPENDING's summary and ranges, a consumer's
// history) begin at the group's pel_min, past the acknowledged records' tombstones: they stepped
// over every one of them (a worker calling XAUTOCLAIM 0-0 between reads paid more with every
// call). Ten deliveries stay in flight, acknowledged in order but for 500 and 501 (swapped): the
// floor, stuck at 501 from there, is moved up by the next XAUTOCLAIM that walks from it.
TEST_CASE("stream groups: walks from the PEL's start skip what was acknowledged") {
  Fixture f;
  FillWithGroup(f, 3000);
  uint64_t acked = 0;
  for (int round = 0; round < 20; ++round) {
    Txn t(*f.store, {});
    for (int i = 0; i < 100; ++i) {
      REQUIRE(t.XReadGroup(0, "s", "g", "alice", std::nullopt, 1, false).ok());
      if (round == 0 && i < 10) continue;  // the window fills
      ++acked;
      const StreamId id[] = {StreamId{acked == 500 ? 501 : acked == 501 ? 500 : acked, 0}};
      REQUIRE(*t.XAck(0, "s", "g", id) == 1);
    }
    REQUIRE(t.Commit().ok());
  }
  const uint64_t next_ack = acked + 1;
  Txn t(*f.store, {});
  const StreamId first{next_ack, 0};  // 1,990 acknowledged below it
  CHECK(DeletionsSkippedBy([&] {  // walks from 501 once, and leaves the floor at the first pending
          const auto claimed = t.XAutoClaim(0, "s", "g", "bob", 0, StreamId{}, 1, true);
          REQUIRE(claimed.ok());
          REQUIRE(claimed->claimed.size() == 1);
          CHECK(claimed->claimed.front().id == first);
        }) <= 3000);
  CHECK(DeletionsSkippedBy([&] {
          const auto claimed = t.XAutoClaim(0, "s", "g", "bob", 0, StreamId{}, 1, true);
          REQUIRE(claimed.ok());
          REQUIRE(claimed->claimed.size() == 1);
          CHECK(claimed->claimed.front().id == first);
          const auto summary = t.XPendingSummary(0, "s", "g");
          REQUIRE(summary.ok());
          CHECK(summary->count == 10);
          CHECK(summary->first == first);
          CHECK(summary->last == StreamId{next_ack + 9, 0});
          const auto range =
              t.XPendingRange(0, "s", "g", 0, StreamId{}, StreamId::Max(), 3, std::nullopt);
          REQUIRE(range.ok());
          REQUIRE(range->size() == 3);
          CHECK(range->front().id == first);
          const auto history = t.XReadGroup(0, "s", "g", "alice", StreamId{}, 2, false);
          REQUIRE((history.ok() && history->has_value() && (*history)->size() == 2));
          CHECK((*history)->front().id == StreamId{next_ack + 1, 0});  // `first` is bob's now
        }) <= 20);
  // Acknowledged to empty, then a forced claim below the old floor: found again.
  for (uint64_t ms = next_ack; ms < next_ack + 10; ++ms) {
    const StreamId id[] = {StreamId{ms, 0}};
    REQUIRE(*t.XAck(0, "s", "g", id) == 1);
  }
  CHECK(t.XPendingSummary(0, "s", "g")->count == 0);
  StreamClaimOptions force;
  force.force = true;
  const StreamId old[] = {StreamId{7, 0}};
  REQUIRE(t.XClaim(0, "s", "g", "carol", old, force).ok());
  const auto summary = t.XPendingSummary(0, "s", "g");
  CHECK(summary->count == 1);
  CHECK(summary->first == StreamId{7, 0});
  CHECK(t.XAutoClaim(0, "s", "g", "dave", 0, StreamId{}, 5, true)->claimed.size() == 1);
}

TEST_CASE("stream groups: deliver, pending, claim, ack; entries-read and lag") {
  Fixture f;
  Txn t(*f.store, {});
  const SV fields[] = {"f", "v"};
  for (uint64_t ms = 1; ms <= 3; ++ms) REQUIRE(t.XAdd(0, "s", At(ms, 0), fields).ok());
  CHECK(*t.XGroupCreate(0, "s", "g", StreamId{}, false, -1) == StreamError::kNone);
  CHECK(*t.XGroupCreate(0, "s", "g", StreamId{}, false, -1) == StreamError::kGroupExists);
  auto read = t.XReadGroup(0, "s", "g", "alice", std::nullopt, 2, false);
  REQUIRE(read.ok());
  REQUIRE(read->has_value());
  CHECK(Ids(**read) == std::vector<StreamId>{{1, 0}, {2, 0}});
  StreamClaimOptions o = JustId(false);  // a unit's time is fixed: no idle time passes
  const StreamId claim[] = {{2, 0}};
  CHECK(Ids(t.XClaim(0, "s", "g", "bob", claim, o)->claimed) == std::vector<StreamId>{{2, 0}});
  auto summary = t.XPendingSummary(0, "s", "g");
  CHECK(summary->count == 2);
  CHECK(summary->consumers ==
        std::vector<std::pair<std::string, int64_t>>{{"alice", 1}, {"bob", 1}});
  const StreamId ack[] = {{1, 0}, {2, 0}, {2, 0}};
  CHECK(*t.XAck(0, "s", "g", ack) == 2);
  auto groups = t.XInfoGroups(0, "s");
  REQUIRE(groups->size() == 1);
  CHECK((*groups)[0].entries_read == 2);
  CHECK((*groups)[0].lag == std::optional<int64_t>(1));
  CHECK((*groups)[0].pending == 0);
  // A pending entry whose entry is gone leaves the PEL when claimed, and is reported as such.
  auto again = t.XReadGroup(0, "s", "g", "alice", std::nullopt, 1, false);
  REQUIRE((again.ok() && again->has_value()));
  const StreamId gone[] = {(**again)[0].id};
  REQUIRE(*t.XDel(0, "s", gone) == 1);
  auto claimed = t.XClaim(0, "s", "g", "bob", gone, o);
  CHECK(claimed->claimed.empty());
  CHECK(claimed->deleted == std::vector<StreamId>{gone[0]});
  CHECK(t.XPendingSummary(0, "s", "g")->count == 0);
  CHECK(*t.XGroupDestroy(0, "s", "g") == 1);
  CHECK(t.XInfoGroups(0, "s")->empty());
}

TEST_CASE("stream groups: a delivery takes over an entry already pending") {
  CheckDeliveryOfPendingEntries(/*legacy=*/false);
  CheckDeliveryOfPendingEntries(/*legacy=*/true);
}

TEST_CASE("stream groups: reads and claims report what they changed in the group") {
  Fixture f;
  Txn t(*f.store, {});
  const SV fields[] = {"f", "v"};
  for (uint64_t ms = 1; ms <= 3; ++ms) REQUIRE(t.XAdd(0, "s", At(ms, 0), fields).ok());
  REQUIRE(*t.XGroupCreate(0, "s", "g", StreamId{}, false, -1) == StreamError::kNone);
  StreamGroupChange c;
  REQUIRE(t.XReadGroup(0, "s", "g", "alice", std::nullopt, 2, false, &c).ok());
  CHECK(c.consumer_created);
  CHECK(c.group_moved);
  CHECK(c.last_delivered == StreamId{2, 0});
  CHECK(c.entries_read == 2);
  REQUIRE(c.pending.size() == 2);
  CHECK(c.pending[1].id == StreamId{2, 0});
  CHECK(c.pending[1].consumer == "alice");
  CHECK(c.pending[1].delivery_count == 1);
  CHECK(c.pending[1].delivery_ms == kT0Ms);

  StreamGroupChange more;  // the last entry, then nothing new: the group stays
  REQUIRE(t.XReadGroup(0, "s", "g", "alice", std::nullopt, 10, false, &more).ok());
  CHECK_FALSE(more.consumer_created);
  CHECK(more.pending.size() == 1);
  StreamGroupChange none;
  auto empty = t.XReadGroup(0, "s", "g", "alice", std::nullopt, 10, false, &none);
  REQUIRE(empty.ok());
  CHECK_FALSE(empty->has_value());
  CHECK_FALSE(none.group_moved);
  CHECK(none.pending.empty());

  StreamGroupChange history;  // delivered again: counts grow, the group does not move
  REQUIRE(t.XReadGroup(0, "s", "g", "alice", StreamId{}, 10, false, &history).ok());
  CHECK_FALSE(history.group_moved);
  REQUIRE(history.pending.size() == 3);
  CHECK(history.pending[0].delivery_count == 2);

  REQUIRE(t.XAdd(0, "s", At(4, 0), fields).ok());
  StreamGroupChange noack;  // delivered, never pending
  REQUIRE(t.XReadGroup(0, "s", "g", "alice", std::nullopt, 10, true, &noack).ok());
  CHECK(noack.group_moved);
  CHECK(noack.last_delivered == StreamId{4, 0});
  CHECK(noack.pending.empty());

  StreamGroupChange claim;
  const StreamId one[] = {{1, 0}};
  REQUIRE(t.XClaim(0, "s", "g", "bob", one, JustId(false), &claim).ok());
  CHECK(claim.consumer_created);
  CHECK_FALSE(claim.group_moved);
  REQUIRE(claim.pending.size() == 1);
  CHECK(claim.pending[0].consumer == "bob");
  CHECK(claim.pending[0].delivery_count == 2);  // JUSTID leaves the count

  StreamGroupChange autoclaim;
  REQUIRE(t.XAutoClaim(0, "s", "g", "carol", 0, StreamId{}, 10, false, &autoclaim).ok());
  CHECK(autoclaim.consumer_created);
  REQUIRE(autoclaim.pending.size() == 3);
  CHECK(autoclaim.pending[0].consumer == "carol");
  CHECK(autoclaim.pending[0].delivery_count == 3);
  REQUIRE(t.Commit().ok());
}

}  // namespace sluice::testing
