// CommitGroup: consecutive units sharing one RocksDB write. Members read earlier members'
// writes, nothing is visible before Flush, a member's rollback drops only its own writes, the
// group releases its locks at Flush, a busy stripe flushes the group instead of deadlocking, and
// commit observers hear of the whole group once.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "memtable.h"
#include "rocksdb/db.h"
#include "rocksdb/perf_context.h"
#include "rocksdb/perf_level.h"
#include "sluice/limiter.h"
#include "sluice/transaction.h"
#include "store_impl.h"
#include "test_util.h"

namespace sluice::testing {
namespace {

using Unit = Store::Transaction;

class CountingObserver : public CommitObserver {
 public:
  void OnCommit(std::span<const KeyRef> written, uint32_t /*flushed_dbs*/) override {
    std::lock_guard<std::mutex> l(mu);
    ++commits;
    keys += written.size();
  }
  std::mutex mu;
  int commits = 0;
  size_t keys = 0;
};

TransactionOptions Member(CommitGroup& group) {
  TransactionOptions o;
  o.isolate_reads = false;
  o.group = &group;
  return o;
}

}  // namespace

TEST_CASE("members see earlier members' writes; the store sees them only after Flush") {
  Fixture f;
  CountingObserver observer;
  REQUIRE(f.store->AddCommitObserver(&observer).ok());
  CommitGroup group(*f.store, /*defer_durability=*/false);
  {
    const KeyRef keys[] = {{0, "a"}};
    Unit u(*f.store, keys, Member(group));
    REQUIRE(u.Set(0, "a", "1", SetPlain()).ok());
    REQUIRE(u.Commit().ok());
  }
  {
    const KeyRef keys[] = {{0, "a"}, {0, "b"}};
    Unit u(*f.store, keys, Member(group));
    CHECK(*u.IncrBy(0, "a", 41) == 42);
    REQUIRE(u.Set(0, "b", "x", SetPlain()).ok());
    REQUIRE(u.Commit().ok());
  }
  CHECK_FALSE(group.empty());
  CHECK(*f.store->Get(0, "a") == std::nullopt);  // nothing written yet
  CHECK(observer.commits == 0);
  REQUIRE(group.Flush().ok());
  CHECK(group.empty());
  CHECK(*f.store->Get(0, "a") == std::optional<std::string>("42"));
  CHECK(*f.store->Get(0, "b") == std::optional<std::string>("x"));
  CHECK(observer.commits == 1);  // one write, one notification for both members
  CHECK(observer.keys == 3);
}

TEST_CASE("a member's rollback, or its end without commit, drops only its own writes") {
  Fixture f;
  CommitGroup group(*f.store, false);
  const KeyRef a[] = {{0, "a"}};
  {
    Unit u(*f.store, a, Member(group));
    REQUIRE(u.Set(0, "a", "kept", SetPlain()).ok());
    REQUIRE(u.Commit().ok());
  }
  {
    Unit u(*f.store, a, Member(group));
    REQUIRE(u.Set(0, "a", "rolled back", SetPlain()).ok());
    u.Rollback();
    CHECK(*u.Get(0, "a") == std::optional<std::string>("kept"));
    REQUIRE(u.Set(0, "c", "after rollback", SetPlain()).ok());
    REQUIRE(u.Commit().ok());
  }
  {
    Unit u(*f.store, a, Member(group));
    REQUIRE(u.Set(0, "a", "never committed", SetPlain()).ok());
  }  // destroyed without Commit
  REQUIRE(group.Flush().ok());
  CHECK(*f.store->Get(0, "a") == std::optional<std::string>("kept"));
  CHECK(*f.store->Get(0, "c") == std::optional<std::string>("after rollback"));
}

TEST_CASE("a member that rewrote a key and ends without commit leaves the group as it was") {
  Fixture f;
  CommitGroup group(*f.store, /*defer_durability=*/false);
  {
    const KeyRef keys[] = {{0, "a"}};
    Unit u(*f.store, keys, Member(group));
    CHECK(*u.IncrBy(0, "a", 1) == 1);
    REQUIRE(u.Commit().ok());
  }
  {
    const KeyRef keys[] = {{0, "a"}};
    Unit u(*f.store, keys, Member(group));
    CHECK(*u.IncrBy(0, "a", 1) == 2);
    CHECK(*u.ExpireAt(0, "a", f.clock->NowMs() + 5000, ExpireCondition::kAlways));
    CHECK(*u.PTtl(0, "a") == 5000);
  }  // no commit
  {
    const KeyRef keys[] = {{0, "a"}};
    Unit u(*f.store, keys, Member(group));
    CHECK(*u.Get(0, "a") == std::optional<std::string>("1"));
    CHECK(*u.PTtl(0, "a") == -1);
    CHECK(*u.IncrBy(0, "a", 1) == 2);
    REQUIRE(u.Commit().ok());
  }
  REQUIRE(group.Flush().ok());
  CHECK(*f.store->Get(0, "a") == std::optional<std::string>("2"));
  CHECK(*f.store->PTtl(0, "a") == -1);
}

// The members of a group that rewrite one hot key (a pipelined LPUSH or HSET on one key) stage
// its record once for the whole group, not once per member: one memtable entry. A member that
// rolls back after replacing it, or after writing another key (which moved it into the batch),
// leaves it as the members before had it.
TEST_CASE("members rewriting one key stage one record; a rollback restores it") {
  Fixture f;
  rocksdb::DB* db = f.store->impl().db();
  uint64_t before = 0;
  REQUIRE(db->GetIntProperty("rocksdb.num-entries-active-mem-table", &before));
  CommitGroup group(*f.store, /*defer_durability=*/false);
  const KeyRef a[] = {{0, "a"}};
  for (int i = 1; i <= 10; ++i) {
    Unit u(*f.store, a, Member(group));
    CHECK(*u.IncrBy(0, "a", 1) == i);
    REQUIRE(u.Commit().ok());
  }
  {
    Unit u(*f.store, a, Member(group));
    CHECK(*u.IncrBy(0, "a", 100) == 110);
    u.Rollback();
    CHECK(*u.Get(0, "a") == std::optional<std::string>("10"));
  }
  {
    const KeyRef ab[] = {{0, "a"}, {0, "b"}};
    Unit u(*f.store, ab, Member(group));
    REQUIRE(u.Set(0, "b", "moves a into the batch", SetPlain()).ok());
    CHECK(*u.IncrBy(0, "a", 5) == 15);
  }  // ends without commit
  {
    Unit u(*f.store, a, Member(group));
    CHECK(*u.Get(0, "a") == std::optional<std::string>("10"));
    CHECK(*u.IncrBy(0, "a", 1) == 11);
    REQUIRE(u.Commit().ok());
  }
  REQUIRE(group.Flush().ok());
  CHECK(*f.store->Get(0, "a") == std::optional<std::string>("11"));
  CHECK(*f.store->Get(0, "b") == std::nullopt);
  CHECK(*f.store->DbSize(0) == 1);
  uint64_t after = 0;
  REQUIRE(db->GetIntProperty("rocksdb.num-entries-active-mem-table", &after));
  CHECK(after - before <= 2);  // "a" once (and the count record), not 11 times
}

// Members reading one key the group holds (a pipelined SISMEMBER or SADD of known members)
// read it from the store once: the last read stays valid across members until a write.
TEST_CASE("members reading one key read the store once; a write makes the next read see it") {
  Fixture f;
  REQUIRE(f.store->Set(0, "a", "1", SetPlain()).ok());
  CommitGroup group(*f.store, /*defer_durability=*/false);
  const KeyRef a[] = {{0, "a"}};
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
  rocksdb::get_perf_context()->Reset();
  const uint64_t newest_before = internal::NewestMemTableReadsOnThisThread();
  for (int i = 0; i < 10; ++i) {
    Unit u(*f.store, a, Member(group));
    CHECK(*u.Get(0, "a") == std::optional<std::string>("1"));
    REQUIRE(u.Commit().ok());
  }
  const uint64_t gets = rocksdb::get_perf_context()->get_from_memtable_count +
                        internal::NewestMemTableReadsOnThisThread() - newest_before;
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);
  CHECK(gets == 1);
  {
    Unit u(*f.store, a, Member(group));
    CHECK(*u.IncrBy(0, "a", 1) == 2);
    REQUIRE(u.Commit().ok());
  }
  {
    Unit u(*f.store, a, Member(group));
    CHECK(*u.Get(0, "a") == std::optional<std::string>("2"));
    CHECK(*u.IncrBy(0, "a", 1) == 3);
  }  // rolled back
  {
    Unit u(*f.store, a, Member(group));
    CHECK(*u.Get(0, "a") == std::optional<std::string>("2"));
    REQUIRE(u.Commit().ok());
  }
  REQUIRE(group.Flush().ok());
  CHECK(*f.store->Get(0, "a") == std::optional<std::string>("2"));
}

// Units that do not lock their reads take a RocksDB snapshot for a read of one key's metadata
// and elements (Txn::SnapshotReads::OneKey); a group's readers share one while nothing is
// published, and a write published by anyone makes the next reader take a new one.
TEST_CASE("readers in a group share a snapshot until a write is published, then see it") {
  Fixture f;
  const std::string_view ab[] = {"a", "b"};
  const KeyRef s_key[] = {{0, "s"}};
  {
    Unit w(*f.store, s_key, TransactionOptions{});
    REQUIRE(w.SAdd(0, "s", ab).ok());
    REQUIRE(w.Commit().ok());
  }
  rocksdb::DB* db = f.store->impl().db();
  auto snapshots = [db] {
    uint64_t n = 0;
    REQUIRE(db->GetIntProperty("rocksdb.num-snapshots", &n));
    return n;
  };
  const std::string_view members[] = {"a", "c"};
  CommitGroup group(*f.store, /*defer_durability=*/false);
  auto read = [&] {
    Unit u(*f.store, std::span<const KeyRef>{}, Member(group));
    auto has = u.SMIsMember(0, "s", members);
    REQUIRE(has.ok());
    REQUIRE(u.Commit().ok());
    return *has;
  };
  const uint64_t before = db->GetLatestSequenceNumber();
  CHECK(read() == std::vector<bool>{true, false});
  CHECK(snapshots() == 1);  // kept for the next reader
  CHECK(read() == std::vector<bool>{true, false});
  CHECK(snapshots() == 1);
  CHECK(db->GetLatestSequenceNumber() == before);
  {
    // Another thread's unit (outside the group) adds "c" and publishes it.
    std::thread([&] {
      const std::string_view c[] = {"c"};
      Unit w(*f.store, s_key, TransactionOptions{});
      REQUIRE(w.SAdd(0, "s", c).ok());
      REQUIRE(w.Commit().ok());
    }).join();
  }
  CHECK(read() == std::vector<bool>{true, true});  // a new snapshot: the kept one is stale
  CHECK(snapshots() == 1);
  REQUIRE(group.Flush().ok());
  CHECK(snapshots() == 0);  // a commit releases the kept one
}

TEST_CASE("each member gets its own time, never earlier than the previous one's") {
  Fixture f;
  CommitGroup group(*f.store, false);
  int64_t first = 0;
  {
    Unit u(*f.store, {}, Member(group));
    first = u.NowMs();
    REQUIRE(u.Commit().ok());
  }
  f.AdvanceMs(250);
  {
    Unit u(*f.store, {}, Member(group));
    CHECK(u.NowMs() == first + 250);
    REQUIRE(u.Commit().ok());
  }
  REQUIRE(group.Flush().ok());
}

TEST_CASE("the group holds its members' locks until Flush, then releases them") {
  Fixture f;
  CommitGroup group(*f.store, false);
  const KeyRef a[] = {{0, "a"}};
  {
    Unit u(*f.store, a, Member(group));
    REQUIRE(u.Set(0, "a", "1", SetPlain()).ok());
    REQUIRE(u.Commit().ok());
  }
  std::atomic<bool> other_done{false};
  std::thread other([&] {
    Unit u(*f.store, a);  // blocks on a's stripe until the group flushes
    REQUIRE(u.Set(0, "a", "2", SetPlain()).ok());
    REQUIRE(u.Commit().ok());
    other_done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK_FALSE(other_done.load());
  REQUIRE(group.Flush().ok());
  other.join();
  CHECK(*f.store->Get(0, "a") == std::optional<std::string>("2"));
}

TEST_CASE("an isolating member claims what it reads into the group's locks, or conflicts") {
  // A script's unit in a group: the undeclared keys it reads are locked until the group's
  // flush; one another thread holds fails with kLockConflict, and the member's end drops only
  // what it staged.
  Fixture f;
  std::atomic<bool> held{false};
  std::atomic<bool> release{false};
  std::thread holder([&] {
    const KeyRef b[] = {{0, "b"}};
    Unit u(*f.store, b);
    held = true;
    while (!release) std::this_thread::yield();
  });
  while (!held) std::this_thread::yield();
  CommitGroup group(*f.store, false);
  const KeyRef a[] = {{0, "a"}};
  {
    Unit u(*f.store, a, Member(group));
    REQUIRE(u.Set(0, "a", "1", SetPlain()).ok());
    REQUIRE(u.Commit().ok());
  }
  TransactionOptions isolating = Member(group);
  isolating.isolate_reads = true;
  {
    Unit script(*f.store, {}, isolating);
    CHECK(*script.Get(0, "a") == std::optional<std::string>("1"));  // an earlier member's write
    CHECK(*script.Get(0, "c") == std::nullopt);                     // free: claimed
    REQUIRE(script.Set(0, "d", "staged", SetPlain()).ok());
    auto busy = script.Get(0, "b");
    REQUIRE_FALSE(busy.ok());
    CHECK(busy.status().code() == Code::kLockConflict);
    CHECK(script.conflicted());
    CHECK(script.shares_group());
  }
  CHECK_FALSE(group.empty());
  std::atomic<bool> other_done{false};
  std::thread other([&] {
    const KeyRef c[] = {{0, "c"}};
    Unit u(*f.store, c);  // blocks on c's stripe, which the script's read claimed
    other_done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK_FALSE(other_done.load());
  REQUIRE(group.Flush().ok());
  other.join();
  release = true;
  holder.join();
  CHECK(*f.store->Get(0, "a") == std::optional<std::string>("1"));
  CHECK(*f.store->Get(0, "d") == std::nullopt);  // the conflicted member's write was dropped
}

TEST_CASE("MarkConflicted stops a member as a failed claim would") {
  Fixture f;
  CommitGroup group(*f.store, false);
  TransactionOptions isolating = Member(group);
  isolating.isolate_reads = true;
  {
    Unit first(*f.store, {}, isolating);
    CHECK_FALSE(first.shares_group());  // nobody else's commit waits in the group
    REQUIRE(first.Set(0, "x", "1", SetPlain()).ok());
    REQUIRE(first.Commit().ok());
  }
  Unit second(*f.store, {}, isolating);
  CHECK(second.shares_group());
  CHECK_FALSE(second.conflicted());
  second.MarkConflicted();
  CHECK(second.conflicted());
  second.Rollback();
  CHECK_FALSE(second.conflicted());
}

TEST_CASE("a member whose stripe is busy flushes the group first: no deadlock") {
  Fixture f;
  // Two threads, two groups, taking the same two keys in opposite orders, many times: with
  // waiting while holding, they would deadlock.
  auto run = [&](const char* first, const char* second) {
    for (int i = 0; i < 300; ++i) {
      CommitGroup group(*f.store, false);
      for (const char* k : {first, second}) {
        const KeyRef keys[] = {{0, k}};
        Unit u(*f.store, keys, Member(group));
        REQUIRE(u.IncrBy(0, k, 1).ok());
        REQUIRE(u.Commit().ok());
      }
      REQUIRE(group.Flush().ok());
    }
  };
  std::thread t1(run, "x", "y");
  std::thread t2(run, "y", "x");
  t1.join();
  t2.join();
  CHECK(*f.store->Get(0, "x") == std::optional<std::string>("600"));
  CHECK(*f.store->Get(0, "y") == std::optional<std::string>("600"));
}

TEST_CASE("a unit that locks everything flushes the group before it starts") {
  Fixture f;
  CommitGroup group(*f.store, false);
  {
    const KeyRef a[] = {{0, "a"}};
    Unit u(*f.store, a, Member(group));
    REQUIRE(u.Set(0, "a", "1", SetPlain()).ok());
    REQUIRE(u.Commit().ok());
  }
  TransactionOptions all = Member(group);
  all.all_keys = true;
  Unit u(*f.store, {}, all);  // would self-deadlock on a's stripe without the flush
  CHECK(group.empty());
  CHECK(*u.DbSize(0) == 1);
}

TEST_CASE("the group flushes by itself at kMaxStripes keys or kMaxUnits members") {
  Fixture f;
  auto add = [&](CommitGroup& group, const std::string& key) {
    const KeyRef keys[] = {{0, key}};
    Unit u(*f.store, keys, Member(group));
    REQUIRE(u.IncrBy(0, key, 1).ok());
    REQUIRE(u.Commit().ok());
  };
  SUBCASE("distinct keys: once it holds kMaxStripes stripes") {
    CommitGroup group(*f.store, false);
    size_t members = 0;
    while (!group.empty() || members == 0) {
      add(group, "k" + std::to_string(members++));
      REQUIRE(members <= CommitGroup::kMaxStripes);  // distinct keys: a stripe each, or fewer
    }
    CHECK(members >= CommitGroup::kMaxStripes / 2);  // two keys rarely share a stripe
    CHECK(*f.store->DbSize(0) == static_cast<int64_t>(members));
  }
  SUBCASE("one hot key: the group holds one stripe and flushes at kMaxUnits members") {
    CommitGroup group(*f.store, false);
    for (size_t i = 0; i + 1 < CommitGroup::kMaxUnits; ++i) add(group, "hot");
    CHECK_FALSE(group.empty());
    CHECK(*f.store->Get(0, "hot") == std::nullopt);
    add(group, "hot");
    CHECK(group.empty());
    CHECK(*f.store->Get(0, "hot") ==
          std::optional<std::string>(std::to_string(CommitGroup::kMaxUnits)));
  }
}

TEST_CASE("a unit outside the thread's open group flushes it instead of waiting on its locks") {
  Fixture f;
  auto run = std::async(std::launch::async, [&] {
    CommitGroup group(*f.store, /*defer_durability=*/false);
    {
      const KeyRef keys[] = {{0, "a"}};
      Unit member(*f.store, keys, Member(group));
      REQUIRE(member.Set(0, "a", "1", SetPlain()).ok());
      REQUIRE(member.Commit().ok());
    }
    CHECK_FALSE(group.empty());  // the group holds a's stripe
    // An own unit on the same thread that locks a (as a woken blocked command does): the
    // group is flushed first, so the unit gets the stripe and sees the member's write.
    const KeyRef keys[] = {{0, "a"}};
    Unit own(*f.store, keys);
    CHECK(group.empty());
    CHECK(*own.IncrBy(0, "a", 1) == 2);
    REQUIRE(own.Commit().ok());
  });
  REQUIRE(run.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
  run.get();
  CHECK(*f.store->Get(0, "a") == std::optional<std::string>("2"));
}

}  // namespace sluice::testing
