// The head of a big sorted set (storage/types/zset_head.cc): ZRANGE's first ranks come from one
// record that every writer keeps exact. Random ZADD/ZINCRBY/ZREM/pops/range removals against a
// model, in units that commit and units that read their own writes, checking the first ranks
// (served from the head when it covers them), whole ranges (iterated) and score ranges (sought).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "deletions_skipped.h"
#include "sluice/transaction.h"
#include "test_util.h"

namespace sluice::testing {

namespace {
using SV = std::string_view;
using Txn = Store::Transaction;
using SM = Txn::ScoredMembers;
using Bound = Txn::ScoreBound;

// Redis's order: score (with -0 as 0), then member bytes.
SM Sorted(const std::map<std::string, double>& model) {
  SM out(model.begin(), model.end());
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    if (a.second != b.second) return a.second < b.second;
    return a.first < b.first;
  });
  return out;
}

SM Slice(const SM& all, int64_t start, int64_t stop) {
  const auto len = static_cast<int64_t>(all.size());
  if (start < 0) start = std::max<int64_t>(0, len + start);
  if (stop < 0) stop = len + stop;
  if (start > stop || start >= len) return {};
  stop = std::min(stop, len - 1);
  return SM(all.begin() + start, all.begin() + stop + 1);
}

void CheckAgainst(Txn& t, SV key, const std::map<std::string, double>& model, std::mt19937& rng) {
  const SM all = Sorted(model);
  for (int64_t stop : {0, 9, 15, 31, 40}) {
    INFO("stop ", stop);
    CHECK(*t.ZRangeByRank(0, key, 0, stop, false) == Slice(all, 0, stop));
    CHECK(*t.ZRangeByRank(0, key, 3, stop, false) == Slice(all, 3, stop));
  }
  CHECK(*t.ZRangeByRank(0, key, 0, -1, false) == all);
  // Ranks nearer the high end are walked from there and turned around.
  CHECK(*t.ZRangeByRank(0, key, -5, -1, false) == Slice(all, -5, -1));
  CHECK(*t.ZRangeByRank(0, key, -40, -30, false) == Slice(all, -40, -30));
  CHECK(*t.ZRangeByRank(0, key, -3, -1, true) == Slice(SM(all.rbegin(), all.rend()), -3, -1));
  CHECK(*t.ZRangeByRank(0, key, 0, 4, true) == Slice(SM(all.rbegin(), all.rend()), 0, 4));
  const double lo = static_cast<double>(rng() % 60) - 5;
  const double hi = lo + static_cast<double>(rng() % 20);
  const bool lo_ex = rng() % 2 != 0;
  const bool hi_ex = rng() % 2 != 0;
  SM in_range;
  for (const auto& e : all) {
    if ((lo_ex ? e.second > lo : e.second >= lo) && (hi_ex ? e.second < hi : e.second <= hi)) {
      in_range.push_back(e);
    }
  }
  INFO("score range ", lo, " ", hi);
  CHECK(*t.ZRangeByScore(0, key, Bound{lo, lo_ex}, Bound{hi, hi_ex}, false, 0, -1) == in_range);
  CHECK(*t.ZRangeByScore(0, key, Bound{lo, lo_ex}, Bound{hi, hi_ex}, true, 0, -1) ==
        SM(in_range.rbegin(), in_range.rend()));
  CHECK(*t.ZCard(0, key) == static_cast<int64_t>(model.size()));
  // Ranks: counted by walks that start in the head and go on past its boundary (or come down).
  for (const int64_t rank : {int64_t{0}, int64_t{14}, int64_t{33}, int64_t{-1}}) {
    const int64_t at = rank < 0 ? static_cast<int64_t>(all.size()) + rank : rank;
    if (at < 0 || at >= static_cast<int64_t>(all.size())) continue;
    INFO("rank ", at);
    CHECK(*t.ZRank(0, key, all[at].first, false) == std::optional<int64_t>(at));
    const auto from_top = static_cast<int64_t>(all.size()) - 1 - at;
    CHECK(*t.ZRank(0, key, all[at].first, true) == std::optional<int64_t>(from_top));
  }
  // From the low end: everything up to a score, and the reverse walk that ends there.
  SM up_to_hi;
  for (const auto& e : all) {
    if (e.second <= hi) up_to_hi.push_back(e);
  }
  const Bound low_end{-INFINITY, false};
  CHECK(*t.ZRangeByScore(0, key, low_end, Bound{hi, false}, false, 2, -1) ==
        Slice(up_to_hi, 2, -1));
  CHECK(*t.ZRangeByScore(0, key, low_end, Bound{hi, false}, true, 0, -1) ==
        SM(up_to_hi.rbegin(), up_to_hi.rend()));
}

}  // namespace

TEST_CASE("zset head: random writes keep the first ranks exact") {
  Fixture f;
  std::mt19937 rng(44);
  std::map<std::string, double> model;
  for (int round = 0; round < 60; ++round) {
    std::optional<Txn> unit(std::in_place, *f.store, std::span<const KeyRef>{});
    Txn& t = *unit;
    const int ops = 1 + static_cast<int>(rng() % 40);
    for (int i = 0; i < ops; ++i) {
      const std::string member = "m" + std::to_string(rng() % 400);
      const double score = static_cast<double>(rng() % 50);
      switch (rng() % 10) {
        case 0: {  // ZREM
          const SV one[] = {member};
          CHECK(*t.ZRem(0, "z", one) == (model.erase(member) ? 1 : 0));
          break;
        }
        case 1: {  // ZPOPMIN or ZPOPMAX (which leaves the fence) of a few
          const int64_t n = 1 + static_cast<int64_t>(rng() % 12);
          const bool max = rng() % 2 != 0;
          const SM popped = *t.ZPop(0, "z", max ? Txn::ZEnd::kMax : Txn::ZEnd::kMin, n);
          const SM all = Sorted(model);
          CHECK(popped ==
                (max ? Slice(SM(all.rbegin(), all.rend()), 0, n - 1) : Slice(all, 0, n - 1)));
          for (const auto& p : popped) model.erase(p.first);
          break;
        }
        case 2: {  // ZREMRANGEBYRANK of a stretch at or near the start
          const int64_t start = static_cast<int64_t>(rng() % 20);
          const int64_t stop = start + static_cast<int64_t>(rng() % 25);
          const SM doomed = Slice(Sorted(model), start, stop);
          CHECK(*t.ZRemRangeByRank(0, "z", start, stop) == static_cast<int64_t>(doomed.size()));
          for (const auto& p : doomed) model.erase(p.first);
          break;
        }
        case 3: {  // ZINCRBY
          Txn::ZAddFlags incr;
          incr.incr = true;
          const double by = static_cast<double>(rng() % 7) - 3;
          const std::pair<double, SV> one[] = {{by, member}};
          CHECK(*t.ZAdd(0, "z", incr, one)->score == model[member] + by);
          model[member] += by;
          break;
        }
        default: {  // ZADD: a new member or a re-score
          const std::pair<double, SV> one[] = {{score, member}};
          REQUIRE(t.ZAdd(0, "z", {}, one).ok());
          model[member] = score;
        }
      }
    }
    CheckAgainst(t, "z", model, rng);  // the unit's own writes
    REQUIRE(t.Commit().ok());
    unit.reset();  // its locks go with it
    Txn r(*f.store, {});
    CheckAgainst(r, "z", model, rng);  // what was stored
  }
}

TEST_CASE("zset head: a copied set, -0, and a set that shrinks and grows again") {
  Fixture f;
  std::mt19937 rng(7);
  std::map<std::string, double> model;
  {
    Txn t(*f.store, {});
    for (int i = 0; i < 200; ++i) {
      const std::string member = "k" + std::to_string(i);
      const double score = static_cast<double>(i % 17) - 8;
      const std::pair<double, SV> one[] = {{score, member}};
      REQUIRE(t.ZAdd(0, "z", {}, one).ok());
      model[member] = score;
    }
    const std::pair<double, SV> minus_zero[] = {{-0.0, "a-zero"}};
    REQUIRE(t.ZAdd(0, "z", {}, minus_zero).ok());
    model["a-zero"] = 0;
    REQUIRE(t.Commit().ok());
  }
  {
    Txn t(*f.store, {});
    const SM first = *t.ZRangeByScore(0, "z", Bound{0, false}, Bound{0, false}, false, 0, 1);
    REQUIRE(first.size() == 1);
    CHECK(first[0].first == "a-zero");
    CHECK(std::signbit(first[0].second));
    REQUIRE(*t.Copy(0, "z", 0, "copy", false));  // elements copied, not the head record
    CheckAgainst(t, "copy", model, rng);
    REQUIRE(t.Commit().ok());
  }
  // Writes to the copy below its old boundary, then above it, stay exact.
  for (int round = 0; round < 10; ++round) {
    {
      Txn t(*f.store, {});
      const std::string member = "k" + std::to_string(rng() % 200);
      const double score = static_cast<double>(rng() % 30) - 20;
      const std::pair<double, SV> one[] = {{score, member}};
      REQUIRE(t.ZAdd(0, "copy", {}, one).ok());
      model[member] = score;
      REQUIRE(t.Commit().ok());
    }
    Txn r(*f.store, {});
    CheckAgainst(r, "copy", model, rng);
  }
  // Shrink below the head's size, then grow past the big encoding again.
  {
    Txn t(*f.store, {});
    const int64_t n = static_cast<int64_t>(model.size()) - 20;
    const SM popped = *t.ZPop(0, "copy", Txn::ZEnd::kMin, n);
    for (const auto& p : popped) model.erase(p.first);
    CheckAgainst(t, "copy", model, rng);
    for (int i = 0; i < 150; ++i) {
      const std::string member = "g" + std::to_string(i);
      const double score = static_cast<double>(150 - i);
      const std::pair<double, SV> one[] = {{score, member}};
      REQUIRE(t.ZAdd(0, "copy", {}, one).ok());
      model[member] = score;
    }
    REQUIRE(t.Commit().ok());
  }
  Txn r(*f.store, {});
  CheckAgainst(r, "copy", model, rng);
}

// A sliding window on one key (ZADD now, ZREMRANGEBYSCORE -inf now - window): the erased
// elements' deletion markers stay below the first live one until a flush; walks from the low
// end start at the head and never step over them (they did: every call cost more than the one
// before, 2,500 erased elements in this test).
TEST_CASE("zset head: walks from the low end do not step over erased elements") {
  Fixture f;
  const int64_t window = 200;
  int64_t now = 0;
  auto pad = [](int64_t n, size_t width) {
    std::string s = std::to_string(n);
    return std::string(width - std::min(width, s.size()), '0') + s;
  };
  // A big set (past 128 members), and a small one made big by a 64-byte member.
  auto slide = [&](Txn& t, SV key, size_t width, int64_t keep) {
    ++now;
    const std::string member = pad(now, width);
    const std::pair<double, SV> one[] = {{static_cast<double>(now), member}};
    REQUIRE(t.ZAdd(0, key, {}, one).ok());
    const auto removed = t.ZRemRangeByScore(0, key, Bound{-INFINITY, false},
                                            Bound{static_cast<double>(now - keep), false});
    REQUIRE(removed.ok());
    CHECK(*removed == (now > keep ? 1 : 0));
  };
  for (int round = 0; round < 27; ++round) {
    Txn t(*f.store, {});
    for (int i = 0; i < 100; ++i) {
      slide(t, "window", 8, window);
      --now;  // the same timestamps for the small set
      slide(t, "small", 70, 10);
    }
    REQUIRE(t.Commit().ok());
  }
  Txn t(*f.store, {});
  CHECK(*t.ZCard(0, "window") == window);
  CHECK(*t.ZCard(0, "small") == 10);
  const SM first =
      *t.ZRangeByScore(0, "window", Bound{-INFINITY, false}, Bound{INFINITY, false}, false, 0, 3);
  REQUIRE(first.size() == 3);
  CHECK(first[0] ==
        std::make_pair(pad(now - window + 1, 8), static_cast<double>(now - window + 1)));
  CHECK(DeletionsSkippedBy([&] {
          slide(t, "window", 8, window);
          --now;
          slide(t, "small", 70, 10);
          CHECK(t.ZRangeByScore(0, "window", Bound{-INFINITY, false}, Bound{INFINITY, false}, false,
                                0, 5)
                    ->size() == 5);
          CHECK(*t.ZRank(0, "window", pad(now - 1, 8), false) ==
                std::optional<int64_t>(window - 2));
          CHECK(t.ZRangeByScore(0, "window", Bound{-INFINITY, false},
                                Bound{static_cast<double>(now - 150), false}, true, 0, -1)
                    ->size() == 50);
          CHECK(t.ZRangeByScore(0, "small", Bound{-INFINITY, false}, Bound{INFINITY, false}, true,
                                0, -1)
                    ->size() == 10);
          Txn::LexBound lo, hi;
          hi.kind = Txn::LexBound::Kind::kMax;
          CHECK(t.ZRangeByLex(0, "window", lo, hi, false, 0, 3)->size() == 3);
        }) <= 20);
}

TEST_CASE("zset head: an erase of thousands from the low end tops the head up once") {
  // A sliding window whose entries all went stale (a pause between bursts): the first call
  // erases the whole window in one unit. Topped up every time it fell under kZHeadMin, the head
  // made an iterator over the unit's staged erasures each time (quadratic); it is topped up once,
  // when the set is saved. RocksDB's perf context counts the memtable seeks.
  Fixture f;
  {
    Txn t(*f.store, {});
    for (int i = 0; i < 4000; ++i) {
      const std::string member = "m" + std::to_string(100000 + i);
      const std::pair<double, SV> one[] = {{static_cast<double>(i), member}};
      REQUIRE(t.ZAdd(0, "w", {}, one).ok());
    }
    REQUIRE(t.Commit().ok());
  }
  Txn t(*f.store, {});
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
  rocksdb::get_perf_context()->Reset();
  const auto removed = t.ZRemRangeByScore(0, "w", Bound{-INFINITY, false}, Bound{3989.0, false});
  const uint64_t seeks = rocksdb::get_perf_context()->seek_on_memtable_count;
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);
  REQUIRE(removed.ok());
  CHECK(*removed == 3990);
  CHECK(seeks <= 20);  // 250 and more when each shortfall was topped up at once
  // The head is whole again: the ten left, in order, from the head and from a walk.
  const SM left = *t.ZRangeByRank(0, "w", 0, -1, false);
  REQUIRE(left.size() == 10);
  CHECK(left.front() == std::make_pair(std::string("m103990"), 3990.0));
  CHECK(*t.ZRank(0, "w", "m103999", false) == std::optional<int64_t>(9));
  REQUIRE(t.Commit().ok());
}

// A queue popped from the high end (ZPOPMAX), with inserts above and below what it popped: the
// fence keeps walks from the top off the popped elements' deletion markers.
TEST_CASE("zset fence: walks from the high end do not step over popped elements") {
  Fixture f;
  std::map<std::string, double> model;
  auto add = [&](Txn& t, int64_t score) {
    const std::string member = "j" + std::to_string(score);
    const std::pair<double, SV> one[] = {{static_cast<double>(score), member}};
    REQUIRE(t.ZAdd(0, "q", {}, one).ok());
    model[member] = static_cast<double>(score);
  };
  {
    Txn t(*f.store, {});
    for (int64_t i = 0; i < 3000; ++i) add(t, i * 10);
    REQUIRE(t.Commit().ok());
  }
  int64_t next_high = 30000;
  for (int round = 0; round < 25; ++round) {
    Txn t(*f.store, {});
    for (int i = 0; i < 100; ++i) {
      const SM popped = *t.ZPop(0, "q", Txn::ZEnd::kMax, 1);
      REQUIRE(popped.size() == 1);
      CHECK(popped[0].first == std::prev(Sorted(model).end())->first);
      model.erase(popped[0].first);
      if (i % 10 == 0) add(t, next_high++);  // above the fence: raises it
      if (i % 10 == 5) add(t, 5 + i);        // far below it
    }
    REQUIRE(t.Commit().ok());
  }
  Txn t(*f.store, {});
  const SM all = Sorted(model);
  CHECK(DeletionsSkippedBy([&] {
          CHECK(*t.ZRangeByRank(0, "q", 0, 2, true) == SM(all.rbegin(), all.rbegin() + 3));
          CHECK(*t.ZRangeByScore(0, "q", Bound{0, false}, Bound{INFINITY, false}, true, 0, 2) ==
                SM(all.rbegin(), all.rbegin() + 2));
          const SM popped = *t.ZPop(0, "q", Txn::ZEnd::kMax, 2);
          CHECK(popped == SM(all.rbegin(), all.rbegin() + 2));
          CHECK(*t.ZRank(0, "q", all[all.size() - 3].first, true) == std::optional<int64_t>(0));
        }) <= 10);
  std::mt19937 rng(3);
  CheckAgainst(t, "q", std::map<std::string, double>(all.begin(), all.end() - 2), rng);
}

// A re-score erases the member's old score element with SingleDelete (Txn::EraseOnceRaw): while
// the old element and its erasure are both in the memtable, a score range walking forward does
// not step over them at all; once a restart has flushed some of them to a table file (the
// erasures that follow are then stepped over, as any deletion), every read still matches the
// model, and a restart with the erasures in the memtable (replayed from the log) loses nothing.
TEST_CASE("zset: re-scored members' old scores are not stepped over; exact across restarts") {
  Fixture f;
  std::mt19937 rng(1201);
  std::map<std::string, double> model;
  auto rescore_all = [&] {
    for (int unit = 0; unit < 6; ++unit) {
      Txn t(*f.store, {});
      for (int i = 0; i < 300; ++i) {
        const std::string member = "member:" + std::to_string(i);
        const double score = static_cast<double>(rng() % 1000);
        if (rng() % 10 == 0 && model.count(member) != 0) {  // removed, and added back later
          const SV one[] = {member};
          REQUIRE(*t.ZRem(0, "z", one) == 1);
          model.erase(member);
          continue;
        }
        const std::pair<double, SV> one[] = {{score, member}};
        REQUIRE(t.ZAdd(0, "z", {}, one).ok());
        model[member] = score;
      }
      REQUIRE(t.Commit().ok());
    }
  };
  auto in_range = [&](double lo, double hi) {
    SM out;
    for (const auto& e : Sorted(model)) {
      if (e.second >= lo && e.second <= hi) out.push_back(e);
    }
    return out;
  };
  for (int round = 0; round < 6; ++round) {
    INFO("round ", round);
    rescore_all();
    if (round == 3) f.Reopen();  // the memtable flushed: pairs dropped, later erasures stepped
    Txn t(*f.store, {});
    const double lo = static_cast<double>(rng() % 900);
    const SM expected = in_range(lo, lo + 100);
    SM got;
    const uint64_t skipped = DeletionsSkippedBy([&] {
      got = *t.ZRangeByScore(0, "z", Bound{lo, false}, Bound{lo + 100, false}, false, 0, -1);
    });
    CHECK(got == expected);
    if (round < 3) CHECK(skipped == 0);  // ~150 re-scored elements' pairs in that range
    CHECK(*t.ZRangeByScore(0, "z", Bound{lo, false}, Bound{lo + 100, false}, true, 0, -1) ==
          SM(expected.rbegin(), expected.rend()));
    CheckAgainst(t, "z", model, rng);
  }
  f.Reopen();  // replays the last rounds' erasures from the log
  Txn t(*f.store, {});
  CheckAgainst(t, "z", model, rng);
  CHECK(*t.ZRangeByScore(0, "z", Bound{-INFINITY, false}, Bound{INFINITY, false}, false, 0, -1) ==
        Sorted(model));
}

}  // namespace sluice::testing
