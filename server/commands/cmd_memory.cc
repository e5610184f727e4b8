// MEMORY USAGE | STATS | DOCTOR | MALLOC-STATS | PURGE | HELP, with Redis 7.0's replies. Sluice
// keeps its data in RocksDB, not in the heap, so MEMORY USAGE is an estimate of what the key
// would take in Redis (its key and value bytes plus Redis-like per-element overheads; a
// collection's elements past SAMPLES are counted at the sampled elements' average size), and
// MEMORY STATS reports the process's resident memory with the dataset's size on disk.
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "server/commands/commands.h"
#include "server/commands/server_commands.h"
#include "server/core/args.h"
#include "server/core/client_state.h"
#include "server/core/errors.h"
#include "server/core/server_state.h"
#include "sluice/store.h"
#include "sluice/transaction.h"
#include "sluice/whole_value.h"

namespace sluice::server {

namespace {

constexpr int64_t kKeyOverhead = 48;         // the dict entry, the object header, the key's sds
constexpr int64_t kCollectionOverhead = 96;  // a collection's own structures
constexpr int64_t kDefaultSamples = 5;       // Redis's OBJ_COMPUTE_SIZE_DEF_SAMPLES

int64_t RoundUp8(int64_t n) { return (n + 7) / 8 * 8; }

// The estimate of a collection of `count` elements whose first ones (up to `samples`) weigh
// `sizes` each.
int64_t Extrapolate(const std::vector<int64_t>& sizes, size_t count) {
  if (sizes.empty()) return 0;
  int64_t sum = 0;
  for (int64_t s : sizes) sum += s;
  return sum * static_cast<int64_t>(count) / static_cast<int64_t>(sizes.size());
}

int64_t EstimateBytes(std::string_view key, const WholeValue& v, int64_t samples) {
  const int64_t base = kKeyOverhead + static_cast<int64_t>(key.size());
  auto take = [&](size_t n) { return static_cast<size_t>(std::min<int64_t>(samples, n)); };
  std::vector<int64_t> sizes;
  switch (v.kind) {
    case ValueKind::kString:
      return RoundUp8(base + static_cast<int64_t>(v.string.size()));
    case ValueKind::kList:
    case ValueKind::kSet:
      for (size_t i = 0; i < take(v.elements.size()); ++i) {
        sizes.push_back(static_cast<int64_t>(v.elements[i].size()) + 11);
      }
      return RoundUp8(base + kCollectionOverhead + Extrapolate(sizes, v.elements.size()));
    case ValueKind::kHash:
      for (size_t i = 0; i < take(v.fields.size()); ++i) {
        sizes.push_back(static_cast<int64_t>(v.fields[i].first.size() + v.fields[i].second.size()) +
                        22);
      }
      return RoundUp8(base + kCollectionOverhead + Extrapolate(sizes, v.fields.size()));
    case ValueKind::kZSet:
      for (size_t i = 0; i < take(v.scored.size()); ++i) {
        sizes.push_back(static_cast<int64_t>(v.scored[i].first.size()) + 40);
      }
      return RoundUp8(base + kCollectionOverhead + Extrapolate(sizes, v.scored.size()));
    default:
      return RoundUp8(base + kCollectionOverhead);
  }
}

// MEMORY USAGE key [SAMPLES count]: Redis checks the options before the key.
void MemoryUsage(CommandContext& ctx, Args args) {
  int64_t samples = kDefaultSamples;
  for (size_t j = 3; j < args.size(); ++j) {
    if (EqualsIgnoreCase(args[j], "samples") && j + 1 < args.size()) {
      std::optional<int64_t> n = ParseInt64(args[j + 1]);
      if (!n) return ReplyError(ctx.out, NotAnInteger());
      if (*n < 0) return ReplyError(ctx.out, SyntaxError());
      samples = *n == 0 ? INT64_MAX : *n;
      ++j;
    } else {
      return ReplyError(ctx.out, SyntaxError());
    }
  }
  const int db = ctx.client.db;
  Result<std::optional<ValueKind>> kind = ctx.txn().Type(db, args[2]);
  if (!kind.ok()) return ReplyError(ctx.out, kind.status());
  if (!kind->has_value()) return ctx.out.NullBulk();
  if (**kind == ValueKind::kStream) {
    Result<int64_t> len = ctx.txn().XLen(db, args[2]);
    const int64_t entries = len.ok() ? *len : 0;
    return ctx.out.Integer(RoundUp8(kKeyOverhead + static_cast<int64_t>(args[2].size()) +
                                    kCollectionOverhead + entries * 64));
  }
  Result<std::optional<WholeValue>> whole = ctx.txn().ReadWhole(db, args[2]);
  if (!whole.ok() || !whole->has_value()) {
    // Sluice's own limiter kinds: a small fixed state.
    return ctx.out.Integer(RoundUp8(kKeyOverhead + static_cast<int64_t>(args[2].size()) + 32));
  }
  ctx.out.Integer(EstimateBytes(args[2], **whole, samples));
}

int64_t Resident() {
  std::ifstream statm("/proc/self/statm");
  int64_t total = 0, resident = 0;
  if (!(statm >> total >> resident)) return 0;
  return resident * sysconf(_SC_PAGESIZE);
}

void MemoryStats(CommandContext& ctx, Args) {
  const int64_t rss = Resident();
  const Store::Stats stats = ctx.store.GetStats();
  const int64_t dataset = stats.disk_bytes + stats.memtable_bytes;
  int64_t keys = 0;
  std::vector<int> dbs;
  for (int db = 0; db < kNumDatabases; ++db) {
    Result<KeyspaceInfo> info = ctx.txn().Keyspace(db);
    if (!info.ok() || info->keys == 0) continue;
    keys += info->keys;
    dbs.push_back(db);
  }
  ctx.out.Map(27 + dbs.size());
  auto field = [&](const char* name, int64_t v) {
    ctx.out.Bulk(name);
    ctx.out.Integer(v);
  };
  auto ratio = [&](const char* name, double v) {
    ctx.out.Bulk(name);
    ctx.out.Double(v);
  };
  field("peak.allocated", rss);
  field("total.allocated", rss);
  field("startup.allocated", 0);
  field("replication.backlog", 0);
  field("clients.slaves", 0);
  field("clients.normal", 0);
  field("cluster.links", 0);
  field("aof.buffer", 0);
  field("lua.caches", 0);
  field("functions.caches", 0);
  for (int db : dbs) {
    ctx.out.Bulk("db." + std::to_string(db));
    ctx.out.Map(3);
    field("overhead.hashtable.main", 0);
    field("overhead.hashtable.expires", 0);
    field("overhead.hashtable.slot-to-keys", 0);
  }
  field("overhead.total", 0);
  field("keys.count", keys);
  field("keys.bytes-per-key", keys == 0 ? 0 : dataset / keys);
  field("dataset.bytes", dataset);
  ratio("dataset.percentage", rss == 0 ? 0.0 : 100.0 * double(dataset) / double(rss));
  ratio("peak.percentage", 100.0);
  field("allocator.allocated", rss);
  field("allocator.active", rss);
  field("allocator.resident", rss);
  ratio("allocator-fragmentation.ratio", 1.0);
  field("allocator-fragmentation.bytes", 0);
  ratio("allocator-rss.ratio", 1.0);
  field("allocator-rss.bytes", 0);
  ratio("rss-overhead.ratio", 1.0);
  field("rss-overhead.bytes", 0);
  ratio("fragmentation", 1.0);
  field("fragmentation.bytes", 0);
}

// Redis's report texts: "empty" under 5 MB, else no issue found (Sluice has no allocator
// statistics to find issues in).
void MemoryDoctor(CommandContext& ctx, Args) {
  const bool empty = Resident() < 5 * 1024 * 1024;
  ctx.out.Verbatim(
      "txt", empty ? "Hi Sam, this instance is empty or is using very little memory, my issues "
                     "detector can't be used in these conditions. Please, leave for your mission "
                     "on Earth and fill it with some data. The new Sam and I will be back to our "
                     "programming as soon as I finished rebooting.\n"
                   : "Hi Sam, I can't find any memory issue in your instance. I can only account "
                     "for what occurs on this base.\n");
}

// Redis's answer when not built with jemalloc (Sluice uses the C library's allocator).
void MemoryMallocStats(CommandContext& ctx, Args) {
  ctx.out.Bulk("Stats not supported for the current allocator");
}

void MemoryPurge(CommandContext& ctx, Args) { ctx.out.Simple("OK"); }

void MemoryHelp(CommandContext& ctx, Args) {
  static constexpr const char* kLines[] = {
      "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "DOCTOR",
      "    Return memory problems reports.",
      "MALLOC-STATS",
      "    Return internal statistics report from the memory allocator.",
      "PURGE",
      "    Attempt to purge dirty pages for reclamation by the allocator.",
      "STATS",
      "    Return information about the memory usage of the server.",
      "USAGE <key> [SAMPLES <count>]",
      "    Return memory in bytes used by <key> and its value. Nested values are",
      "    sampled up to <count> times (default: 5, 0 means sample all).",
      "HELP",
      "    Prints this help.",
  };
  ctx.out.Array(std::size(kLines));
  for (const char* line : kLines) ctx.out.Simple(line);
}

}  // namespace

void RegisterMemoryCommands(CommandTable& table) {
  table.Add(MakeSpec("server", "memory", -2, 0, {}, nullptr,
                     "A container for memory diagnostics commands", "4.0.0", "subcommand"));
  table.Add(MakeSpec("server", "memory|usage", -3, kReadOnly, {2, 2, 1}, MemoryUsage,
                     "Estimate the memory usage of a key", "4.0.0", "key [SAMPLES count]"));
  table.Add(MakeSpec("server", "memory|stats", 2, 0, {}, MemoryStats,
                     "Returns details about memory usage", "4.0.0", ""));
  table.Add(MakeSpec("server", "memory|doctor", 2, 0, {}, MemoryDoctor,
                     "Outputs memory problems report", "4.0.0", ""));
  table.Add(MakeSpec("server", "memory|malloc-stats", 2, 0, {}, MemoryMallocStats,
                     "Show allocator internal stats", "4.0.0", ""));
  table.Add(MakeSpec("server", "memory|purge", 2, 0, {}, MemoryPurge,
                     "Ask the allocator to release memory", "4.0.0", ""));
  table.Add(MakeSpec("server", "memory|help", 2, kLoading | kStale, {}, MemoryHelp,
                     "Show helpful text about the different subcommands", "4.0.0", ""));
}

}  // namespace sluice::server
