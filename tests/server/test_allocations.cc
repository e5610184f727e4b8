// Steady-state heap allocations of the hot commands (GET, SET, INCR, GCRA.TAKE, CL.THROTTLE)
// run through the real Dispatcher against a real Store, the way a Connection runs them: a
// reused reply buffer, arguments as views, one log flush per pipelined batch.
//
// This file replaces the global operator new for the whole test_server binary with a version
// that counts the calls made by the *current thread* while counting is switched on (RocksDB's
// and the Store's background threads do not count), malloc underneath. SLUICE_ALLOC_TRACE=N
// prints the stacks of the first N (at most 256) counted allocations of each command kind
// (module+offset: resolve with `addr2line -f -C -i -e test_server 0xOFFSET`); a failing check
// prints the first 8 anyway.
#include <dlfcn.h>
#include <doctest/doctest.h>
#include <execinfo.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/reply_writer.h"
#include "server/core/dispatcher.h"
#include "sluice/limiter.h"
#include "sluice/store.h"
#include "tests/common/counting_new.h"
#include "tests/server/harness.h"

namespace {

constexpr int kMaxTraces = 256;
int g_max_traces = 8;  // SLUICE_ALLOC_TRACE=N: N stacks
constexpr int kMaxFrames = 24;
struct Trace {
  int frames = 0;
  void* pcs[kMaxFrames];
  size_t size = 0;
};
Trace g_traces[kMaxTraces];
int g_traced = 0;  // touched only by the counting thread

// The counting allocator's hook: records the stacks of the first counted allocations.
void TraceAllocation(size_t size) {
  if (g_traced >= g_max_traces) return;
  Trace& t = g_traces[g_traced++];
  t.size = size;
  t.frames = backtrace(t.pcs, kMaxFrames);
}

}  // namespace

namespace sluice::server::testing {
namespace {

using sluice::testing::AllocationCounter;
using sluice::testing::g_allocation_hook;

void PrintTraces(const char* what) {
  std::fprintf(stderr, "%s: stacks of the first %d counted allocations:\n", what, g_traced);
  for (int i = 0; i < g_traced; ++i) {
    std::fprintf(stderr, "  allocation %d (%zu bytes):\n", i, g_traces[i].size);
    for (int f = 1; f < g_traces[i].frames; ++f) {
      Dl_info info;
      void* pc = g_traces[i].pcs[f];
      if (dladdr(pc, &info) != 0 && info.dli_fname != nullptr) {
        std::fprintf(
            stderr, "    %s+0x%zx %s\n", info.dli_fname,
            static_cast<size_t>(static_cast<char*>(pc) - static_cast<char*>(info.dli_fbase)),
            info.dli_sname ? info.dli_sname : "");
      } else {
        std::fprintf(stderr, "    %p\n", pc);
      }
    }
  }
}

bool TraceRequested() {
  const char* v = std::getenv("SLUICE_ALLOC_TRACE");
  if (v == nullptr || std::atoi(v) <= 0) return false;
  g_max_traces = std::min(std::atoi(v), kMaxTraces);
  return true;
}

// A command line kept alive as strings, run as views (the parser gives views too).
struct Command {
  std::vector<std::string> words;
  std::vector<std::string_view> views;
};

std::vector<Command> Commands(const std::vector<std::vector<std::string>>& lines) {
  std::vector<Command> out(lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    out[i].words = lines[i];
    out[i].views.assign(out[i].words.begin(), out[i].words.end());
  }
  return out;
}

constexpr int kKeys = 64;
// Commands per batch, like one read batch of redis-benchmark -P16.
constexpr int kPipeline = 16;

// ~20-byte keys: longer than std::string's 15-byte small-string buffer, so any per-call
// std::string copy of a key shows up.
std::string KeyName(std::string_view kind, int i) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%s:user:%08d", std::string(kind).c_str(), i);
  return buf;
}

// Runs `one(ctx, i)` for i in [0, n) in pipelined batches with a reused reply buffer, each
// batch ended by one log flush, as a Connection runs a read batch; returns the allocations
// counted.
template <typename Fn>
long RunBatches(Harness& h, std::string& reply, int n, bool count, Fn&& one) {
  g_traced = 0;
  g_allocation_hook = &TraceAllocation;
  AllocationCounter counter;
  if (!count) counter.Stop();
  for (int done = 0; done < n;) {
    reply.clear();
    {
      protocol::ReplyWriter out(&reply, h.client().resp);
      CommandContext ctx{h.store(), h.server(), h.client(), out};
      for (int i = 0; i < kPipeline && done < n; ++i, ++done) one(ctx, done);
    }
    REQUIRE(h.store().FlushLog().ok());  // Connection::FinishBatch (appendfsync everysec)
    h.clock().AdvanceNs(1'000'000);      // 1 ms per batch: limiter state refills and expires
  }
  return counter.Stop();
}

// RocksDB's own allocations, measured with Debian's librocksdb 7.8.3, which is built without
// NDEBUG: its kill points (TEST_KILL_RANDOM) take their name and __FILE__ as std::string by
// value, so they allocate on every call even though nothing is ever killed.
//  - each WAL record written (one per write): WritableFileWriter::Append, 8;
//  - each FlushWAL at the end of a batch: 4 when the WAL buffer holds data (Flush,
//    WriteBuffered), 2 when it is empty (Flush);
//  - now and then: a WAL record that crosses a 32 KiB log block is written in two pieces (8
//    more), a memtable arena block: kRocksSlack covers those.
// A RocksDB built with NDEBUG allocates none of these; the budgets are upper bounds.
constexpr long kRocksPerWalRecord = 8;
constexpr long kRocksPerFlushWithData = 4;
constexpr long kRocksPerEmptyFlush = 2;

struct Case {
  std::string name;
  std::vector<Command> cmds;
  const char* expected_first_reply_prefix;
  bool writes;  // every command writes one WAL record
  // The same operation as a direct Store call (the engine's share, without server code).
  std::function<void(Store&, int)> direct;
};

TEST_CASE("hot commands do not allocate in steady state") {
  // The limiter keys expire between takes (1 us of state per take, 1 ms per batch): with the
  // expiry cycle on, its removals would share this thread's write groups and their allocations.
  Harness h(HarnessOptions{.active_expiry = false});
  // Let the first backtrace() load what it needs before anything is counted.
  void* warm[2];
  backtrace(warm, 2);

  const std::string value(100, 'v');
  std::vector<std::vector<std::string>> get, set, incr, gcra, cell;
  std::vector<std::string> str_keys, ctr_keys, gcra_keys, cell_keys;
  for (int i = 0; i < kKeys; ++i) {
    str_keys.push_back(KeyName("str", i));
    ctr_keys.push_back(KeyName("ctr", i));
    gcra_keys.push_back(KeyName("gcra", i));
    cell_keys.push_back(KeyName("cell", i));
    set.push_back({"SET", str_keys.back(), value});
    get.push_back({"GET", str_keys.back()});
    incr.push_back({"INCR", ctr_keys.back()});
    gcra.push_back({"GCRA.TAKE", gcra_keys.back(), "1000000", "1s"});
    cell.push_back({"CL.THROTTLE", cell_keys.back(), "100", "1000000", "1"});
  }
  limiter::GcraParams gcra_params, cell_params;
  REQUIRE(limiter::MakeGcraParams(1000000, limiter::kNsPerSecond, 0, &gcra_params).empty());
  REQUIRE(limiter::MakeCellParams(100, 1000000, 1, &cell_params).empty());
  std::string got;  // reused, like the GET handler's buffer
  auto key = [](const std::vector<std::string>& keys, int i) -> const std::string& {
    return keys[static_cast<size_t>(i) % keys.size()];
  };

  std::vector<Case> cases;
  cases.push_back({"SET", Commands(set), "+OK", true, [&](Store& st, int i) {
                     CHECK(st.Set(0, key(str_keys, i), value, SetOptions()).ok());
                   }});
  cases.push_back({"GET", Commands(get), "$100\r\n", false, [&](Store& st, int i) {
                     bool found = false;
                     CHECK(st.GetInto(0, key(str_keys, i), &got, &found).ok());
                   }});
  cases.push_back({"INCR", Commands(incr), ":", true,
                   [&](Store& st, int i) { CHECK(st.IncrBy(0, key(ctr_keys, i), 1).ok()); }});
  cases.push_back({"GCRA.TAKE", Commands(gcra), "*5\r\n:1\r\n", true, [&](Store& st, int i) {
                     CHECK(st.GcraTake(0, key(gcra_keys, i), gcra_params, 1).ok());
                   }});
  cases.push_back({"CL.THROTTLE", Commands(cell), "*5\r\n:0\r\n", true, [&](Store& st, int i) {
                     CHECK(st.GcraTake(0, key(cell_keys, i), cell_params, 1).ok());
                   }});

  Dispatcher dispatcher(h.table());
  std::string reply;
  reply.reserve(1 << 20);
  constexpr int kWarmup = 2000;
  constexpr int kMeasured = 10000;
  constexpr long kBatches = (kMeasured + kPipeline - 1) / kPipeline;
  constexpr long kRocksSlack = kMeasured / 20;  // far below one allocation per command
  const bool trace = TraceRequested();
  for (Case& c : cases) {
    CAPTURE(c.name);
    auto dispatch = [&](CommandContext& ctx, int i) {
      dispatcher.Dispatch(ctx, c.cmds[static_cast<size_t>(i) % c.cmds.size()].views);
    };
    auto direct = [&](CommandContext& ctx, int i) { c.direct(ctx.store, i); };
    RunBatches(h, reply, kWarmup, /*count=*/false, dispatch);
    RunBatches(h, reply, kWarmup, /*count=*/false, direct);

    const long via_store = RunBatches(h, reply, kMeasured, /*count=*/true, direct);
    const long via_server = RunBatches(h, reply, kMeasured, /*count=*/true, dispatch);
    CHECK(reply.rfind(c.expected_first_reply_prefix, 0) == 0);  // e.g. the take was allowed

    const long budget =
        (c.writes ? kRocksPerWalRecord * kMeasured + kRocksPerFlushWithData * kBatches
                  : kRocksPerEmptyFlush * kBatches) +
        kRocksSlack;
    // A direct (autocommit) Store write flushes its own log record; the server's units defer
    // durability and the batch's one flush serves them all.
    const long store_budget = c.writes ? (kRocksPerWalRecord + kRocksPerFlushWithData) * kMeasured +
                                             kRocksPerEmptyFlush * kBatches + kRocksSlack
                                       : budget;
    MESSAGE(c.name << ": " << via_server << " allocations in " << kMeasured
                   << " commands through the Dispatcher (" << via_store
                   << " as direct Store calls; budgets " << budget << " and " << store_budget
                   << ")");
    // The server's share (dispatcher, handler, reply) is zero: running the command costs no
    // more than the Store call it makes. The tolerance absorbs RocksDB's occasional extra
    // (log block crossings, arena blocks), which differ a little between two runs.
    CHECK(via_server <= via_store + kMeasured / 100);
    // The engine's share is zero too (limiter takes included): all that remains is RocksDB's.
    CHECK(via_store <= store_budget);
    CHECK(via_server <= budget);
    if (trace || via_server > budget || via_server > via_store + kMeasured / 100) {
      PrintTraces(c.name.c_str());
    }
  }
}

}  // namespace
}  // namespace sluice::server::testing
