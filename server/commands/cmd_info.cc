// INFO [section ...]: Redis's "# Section\r\nfield:value\r\n" text. Sections: server, clients,
// memory, persistence, stats, cpu, commandstats, errorstats, cluster, keyspace, limiters,
// native_scripts;
// "default" gives all but commandstats (as Redis), "all" and "everything" give them all. Unknown
// sections are skipped (an empty reply when nothing matched), as Redis does.
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <fstream>
#include <string>

#include "server/cluster/cluster.h"
#include "server/commands/migrate_cache.h"
#include "server/commands/server_commands.h"
#include "server/core/args.h"
#include "server/core/client_state.h"
#include "server/core/command_stats.h"
#include "server/core/errors.h"
#include "server/core/loading_state.h"
#include "server/core/server_state.h"
#include "server/pubsub/pubsub_registry.h"
#include "server/replication/replication.h"
#include "server/scripting/lua_vm.h"
#include "server/scripting/native/native_scripts.h"
#include "server/scripting/scripting_state.h"
#include "sluice/store.h"

#ifndef SLUICE_VERSION
#define SLUICE_VERSION "unknown"
#endif

namespace sluice::server {

namespace {

constexpr const char* kRedisVersion = "7.0.15";

void Field(std::string& out, std::string_view name, std::string_view value) {
  out += name;
  out += ':';
  out += value;
  out += "\r\n";
}

void Field(std::string& out, std::string_view name, int64_t value) {
  Field(out, name, std::to_string(value));
}

std::string OsName() {
  utsname u{};
  if (uname(&u) != 0) return "unknown";
  return std::string(u.sysname) + " " + u.release + " " + u.machine;
}

// Resident set size in bytes, from /proc (0 where unavailable).
int64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages_total = 0, pages_resident = 0;
  if (!(statm >> pages_total >> pages_resident)) return 0;
  return pages_resident * sysconf(_SC_PAGESIZE);
}

std::string Human(int64_t bytes) {
  char buf[32];
  double b = static_cast<double>(bytes);
  if (b < 1024) {
    snprintf(buf, sizeof(buf), "%lldB", static_cast<long long>(bytes));
  } else if (b < 1024.0 * 1024) {
    snprintf(buf, sizeof(buf), "%.2fK", b / 1024);
  } else if (b < 1024.0 * 1024 * 1024) {
    snprintf(buf, sizeof(buf), "%.2fM", b / (1024 * 1024));
  } else {
    snprintf(buf, sizeof(buf), "%.2fG", b / (1024.0 * 1024 * 1024));
  }
  return buf;
}

void ServerSection(CommandContext& ctx, const Config& config, std::string& out) {
  ServerState& s = ctx.server;
  out += "# Server\r\n";
  Field(out, "redis_version", kRedisVersion);
  Field(out, "sluice_version", SLUICE_VERSION);
  Field(out, "redis_mode", "standalone");
  Field(out, "os", OsName());
  Field(out, "arch_bits", static_cast<int64_t>(sizeof(void*) * 8));
  Field(out, "multiplexing_api", "epoll");
  Field(out, "process_id", static_cast<int64_t>(getpid()));
  Field(out, "run_id", replication::RunId());
  Field(out, "tcp_port", s.tcp_port() != 0 ? s.tcp_port() : config.port);
  Field(out, "server_time_usec", s.clock().NowNs() / 1000);
  Field(out, "uptime_in_seconds", s.uptime_seconds());
  Field(out, "uptime_in_days", s.uptime_seconds() / 86400);
  Field(out, "hz", 10);
  Field(out, "io_threads", config.EffectiveThreads());
  Field(out, "executable", s.executable());
  Field(out, "config_file", config.config_file);
}

void ClientsSection(CommandContext& ctx, const Config& config, std::string& out) {
  out += "# Clients\r\n";
  Field(out, "connected_clients", static_cast<int64_t>(ctx.server.clients().size()));
  Field(out, "cluster_connections", 0);
  Field(out, "maxclients", config.maxclients);
  // As Redis: clients a CLIENT PAUSE holds count as blocked.
  Field(out, "blocked_clients",
        ctx.server.blocking().blocked_clients() + ctx.server.held_by_pause());
  Field(out, "tracking_clients", ctx.server.tracking().clients());
}

// Redis 7.0's scripting fields; the Lua memory is every I/O thread's states together, EVAL's
// and the functions' apart as Redis counts its two engines.
void ScriptingMemoryFields(CommandContext& ctx, std::string& out) {
  const auto vm = static_cast<int64_t>(LuaVm::TotalMemory(LuaVm::Kind::kEval));
  const auto vm_functions = static_cast<int64_t>(LuaVm::TotalMemory(LuaVm::Kind::kFunctions));
  const auto scripts = static_cast<int64_t>(ctx.server.scripting().scripts.body_bytes());
  const auto cached = static_cast<int64_t>(ctx.server.scripting().scripts.size());
  Field(out, "used_memory_lua", vm);
  Field(out, "used_memory_vm_eval", vm);
  Field(out, "used_memory_lua_human", Human(vm));
  Field(out, "used_memory_scripts_eval", scripts);
  Field(out, "number_of_cached_scripts", cached);
  FunctionRegistry& functions = ctx.server.scripting().functions;
  const auto code = static_cast<int64_t>(functions.code_bytes());
  Field(out, "number_of_functions", static_cast<int64_t>(functions.function_count()));
  Field(out, "number_of_libraries", static_cast<int64_t>(functions.library_count()));
  Field(out, "used_memory_vm_functions", vm_functions);
  Field(out, "used_memory_vm_total", vm + vm_functions);
  Field(out, "used_memory_vm_total_human", Human(vm + vm_functions));
  Field(out, "used_memory_functions", code);
  Field(out, "used_memory_scripts", scripts + code);
  Field(out, "used_memory_scripts_human", Human(scripts + code));
}

void MemorySection(CommandContext& ctx, std::string& out) {
  Store::Stats stats = ctx.store.GetStats();
  int64_t rss = ResidentBytes();
  out += "# Memory\r\n";
  Field(out, "used_memory", rss);
  Field(out, "used_memory_human", Human(rss));
  Field(out, "used_memory_rss", rss);
  Field(out, "used_memory_rss_human", Human(rss));
  Field(out, "maxmemory", 0);
  Field(out, "maxmemory_human", "0B");
  Field(out, "maxmemory_policy", "noeviction");
  ScriptingMemoryFields(ctx, out);
  Field(out, "sluice_memtable_bytes", stats.memtable_bytes);
  Field(out, "sluice_disk_bytes", stats.disk_bytes);
  Field(out, "sluice_record_cache_bytes", stats.record_cache_bytes);
  Field(out, "sluice_record_cache_hits", stats.record_cache_hits);
  Field(out, "sluice_record_cache_misses", stats.record_cache_misses);
  Field(out, "sluice_iterators_reused", stats.iterators_reused);
  Field(out, "sluice_iterators_made", stats.iterators_made);
  Field(out, "sluice_read_ahead_fills", stats.read_ahead_fills);
  Field(out, "sluice_read_ahead_hits", stats.read_ahead_hits);
}

// Redis's loading_* fields, while a load runs (its order; no separate RDB memory: 0).
void LoadingFields(const LoadingProgress& p, std::string& out) {
  const int64_t now = static_cast<int64_t>(std::time(nullptr));
  const double perc =
      p.total_bytes > 0 ? 100.0 * static_cast<double>(p.loaded_bytes) / p.total_bytes : 0;
  const int64_t elapsed = now - p.start_unix_s;
  // Redis: 1 until anything was loaded, then the time left at the rate so far.
  int64_t eta = 1;
  if (p.loaded_bytes > 0 && elapsed > 0) {
    const double rate = static_cast<double>(p.loaded_bytes) / static_cast<double>(elapsed);
    eta = static_cast<int64_t>(static_cast<double>(p.total_bytes - p.loaded_bytes) / rate);
  }
  Field(out, "loading_start_time", p.start_unix_s);
  Field(out, "loading_total_bytes", p.total_bytes);
  Field(out, "loading_rdb_used_mem", 0);
  Field(out, "loading_loaded_bytes", p.loaded_bytes);
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f", perc);
  Field(out, "loading_loaded_perc", buf);
  Field(out, "loading_eta_seconds", eta);
}

void PersistenceSection(CommandContext& ctx, const Config& config, std::string& out) {
  Store::Stats stats = ctx.store.GetStats();
  out += "# Persistence\r\n";
  const LoadingProgress loading = GetLoadingProgress();
  Field(out, "loading", loading.loading ? 1 : 0);
  Field(out, "async_loading", 0);
  const Saves::Info saves = ctx.server.saves().info();
  Field(out, "rdb_changes_since_last_save", ctx.server.dirty().load());
  Field(out, "rdb_bgsave_in_progress", saves.in_progress ? 1 : 0);
  Field(out, "rdb_last_save_time", ctx.server.last_save_unix());
  Field(out, "rdb_last_bgsave_status", saves.last_ok ? "ok" : "err");
  Field(out, "rdb_last_bgsave_time_sec",
        saves.last_duration_ms < 0 ? -1 : (saves.last_duration_ms + 500) / 1000);
  // Where SAVE/BGSAVE put the last copy (a RocksDB checkpoint; empty before any).
  Field(out, "sluice_last_checkpoint", saves.last_checkpoint);
  Field(out, "aof_enabled", 1);
  Field(out, "aof_rewrite_in_progress", 0);
  Field(out, "aof_last_write_status", stats.writes_refused ? "err" : "ok");
  // Why writes are refused (empty when they are not): the store's last write error.
  Field(out, "sluice_last_write_error", stats.write_error);
  Field(out, "appendfsync", DurabilityName(ctx.store.durability()));
  Field(out, "sluice_last_sync_unix_ms", stats.last_sync_unix_ms);
  // RocksDB's flushes and compactions, running and waiting (0 and 0: the data has settled).
  Field(out, "sluice_background_running", stats.background_running);
  Field(out, "sluice_background_pending", stats.background_pending);
  if (loading.loading) LoadingFields(loading, out);
}

void StatsSection(CommandContext& ctx, std::string& out) {
  ServerStats& st = ctx.server.stats();
  auto get = [](const StatCounter& v) { return v.load(); };
  out += "# Stats\r\n";
  Field(out, "total_connections_received", get(st.total_connections_received));
  Field(out, "total_commands_processed", get(st.total_commands_processed));
  Field(out, "total_net_input_bytes", get(st.total_net_input_bytes));
  Field(out, "total_net_output_bytes", get(st.total_net_output_bytes));
  Field(out, "rejected_connections", get(st.rejected_connections));
  replication::Replication* repl = replication::Instance();
  Field(out, "sync_full", repl != nullptr ? repl->sync_full() : 0);
  Field(out, "sync_partial_ok", repl != nullptr ? repl->sync_partial_ok() : 0);
  Field(out, "sync_partial_err", repl != nullptr ? repl->sync_partial_err() : 0);
  const Store::Stats store_stats = ctx.store.GetStats();
  Field(out, "expired_keys", store_stats.expired_keys);
  char stale[32];
  std::snprintf(stale, sizeof stale, "%.2f", store_stats.expired_stale * 100);
  Field(out, "expired_stale_perc", stale);
  Field(out, "expired_time_cap_reached_count", store_stats.expiry_time_cap_reached);
  Field(out, "expire_cycle_cpu_milliseconds", store_stats.expire_cycle_ms);
  Field(out, "evicted_keys", 0);
  const PubSubRegistry::Counts pubsub = PubSubOf(ctx.server).counts();
  Field(out, "pubsub_channels", pubsub.channels);
  Field(out, "pubsub_patterns", pubsub.patterns);
  Field(out, "pubsubshard_channels", pubsub.shard_channels);
  Field(out, "migrate_cached_sockets", static_cast<int64_t>(TheMigrateCache().size()));
  const TrackingRegistry& tracking = ctx.server.tracking();
  Field(out, "tracking_total_keys", tracking.total_keys());
  Field(out, "tracking_total_items", tracking.total_items());
  Field(out, "tracking_total_prefixes", tracking.total_prefixes());
  Field(out, "total_error_replies", get(st.total_error_replies));
  // Redis counts RESTOREs it deep-sanitized under sanitize-dump-payload yes|clients; Sluice
  // decodes every payload whole whatever that option says, with no separate pass to count.
  Field(out, "dump_payload_sanitizations", 0);
  // Redis 7.2's names (7.0 has no such counters).
  Field(out, "client_query_buffer_limit_disconnections",
        get(st.client_query_buffer_limit_disconnections));
  Field(out, "client_output_buffer_limit_disconnections",
        get(st.client_output_buffer_limit_disconnections));
}

std::string Seconds(const timeval& t) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%ld.%06ld", static_cast<long>(t.tv_sec),
                static_cast<long>(t.tv_usec));
  return buf;
}

// The process's CPU time; "main thread": the I/O thread answering (Sluice has no single main
// thread).
void CpuSection(std::string& out) {
  rusage self{}, children{}, thread{};
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);
  getrusage(RUSAGE_THREAD, &thread);
  out += "# CPU\r\n";
  Field(out, "used_cpu_sys", Seconds(self.ru_stime));
  Field(out, "used_cpu_user", Seconds(self.ru_utime));
  Field(out, "used_cpu_sys_children", Seconds(children.ru_stime));
  Field(out, "used_cpu_user_children", Seconds(children.ru_utime));
  Field(out, "used_cpu_sys_main_thread", Seconds(thread.ru_stime));
  Field(out, "used_cpu_user_main_thread", Seconds(thread.ru_utime));
}

// Every command and subcommand called or refused since the start (or CONFIG RESETSTAT), in the
// command table's order.
void CommandStatsSection(CommandContext& ctx, std::string& out) {
  out += "# Commandstats\r\n";
  const std::vector<CommandTotals> totals = SumCommandStats();
  for (const CommandSpec& spec : ctx.server.commands().all()) {
    if (spec.id >= totals.size()) continue;
    const CommandTotals& t = totals[spec.id];
    if (t.calls == 0 && t.rejected == 0 && t.failed == 0) continue;
    char buf[160];
    std::snprintf(buf, sizeof buf,
                  "calls=%llu,usec=%llu,usec_per_call=%.2f,rejected_calls=%llu,failed_calls=%llu",
                  static_cast<unsigned long long>(t.calls), static_cast<unsigned long long>(t.usec),
                  t.calls == 0 ? 0.0 : static_cast<double>(t.usec) / static_cast<double>(t.calls),
                  static_cast<unsigned long long>(t.rejected),
                  static_cast<unsigned long long>(t.failed));
    Field(out, "cmdstat_" + spec.name, buf);
  }
}

void ErrorStatsSection(std::string& out) {
  out += "# Errorstats\r\n";
  for (const auto& [code, n] : SumErrorStats()) {
    Field(out, "errorstat_" + code, "count=" + std::to_string(n));
  }
}

void ReplicationSection(std::string& out) {
  replication::Replication* repl = replication::Instance();
  if (repl != nullptr) {
    out += repl->InfoSection();
    return;
  }
  out += "# Replication\r\nrole:master\r\nconnected_slaves:0\r\n";
}

void KeyspaceSection(CommandContext& ctx, std::string& out) {
  out += "# Keyspace\r\n";
  for (int db = 0; db < kNumDatabases; ++db) {
    Result<KeyspaceInfo> info = ctx.txn().Keyspace(db);
    if (!info.ok() || info->keys == 0) continue;
    out += "db" + std::to_string(db) + ":keys=" + std::to_string(info->keys) +
           ",expires=" + std::to_string(info->expires) + ",avg_ttl=0\r\n";
  }
}

void NativeScriptsSection(CommandContext& ctx, std::string& out) {
  out += "# Native_scripts\r\n";
  out += NativeScriptsInfo(ctx);
}

void LimitersSection(CommandContext& ctx, std::string& out) {
  out += "# Limiters\r\n";
  out += ctx.server.limiter_stats().InfoSection();
}

enum Section : unsigned {
  kServer = 1u << 0,
  kClients = 1u << 1,
  kMemory = 1u << 2,
  kPersistence = 1u << 3,
  kStats = 1u << 4,
  kKeyspace = 1u << 5,
  kLimiters = 1u << 6,
  kNativeScripts = 1u << 7,
  kReplication = 1u << 8,
  kCpu = 1u << 9,
  kCommandStats = 1u << 10,
  kErrorStats = 1u << 11,
  kCluster = 1u << 12,
  kLatencyStats = 1u << 13,
  kAll = (1u << 14) - 1,
  kDefault = kAll & ~kCommandStats & ~kLatencyStats,
};

unsigned SectionBit(std::string_view name) {
  static constexpr std::pair<const char*, unsigned> kNames[] = {
      {"server", kServer},
      {"clients", kClients},
      {"memory", kMemory},
      {"persistence", kPersistence},
      {"stats", kStats},
      {"keyspace", kKeyspace},
      {"limiters", kLimiters},
      {"native_scripts", kNativeScripts},
      {"replication", kReplication},
      {"cpu", kCpu},
      {"commandstats", kCommandStats},
      {"errorstats", kErrorStats},
      {"cluster", kCluster},
      {"latencystats", kLatencyStats},
      {"default", kDefault},
      {"all", kAll},
      {"everything", kAll},
  };
  for (const auto& [n, bit] : kNames) {
    if (EqualsIgnoreCase(name, n)) return bit;
  }
  return 0;
}

void Info(CommandContext& ctx, Args args) {
  unsigned wanted = args.size() == 1 ? static_cast<unsigned>(kDefault) : 0u;
  for (size_t i = 1; i < args.size(); ++i) wanted |= SectionBit(args[i]);
  Config config = ctx.server.config();
  std::string out;
  // Sections are separated by an empty line, as Redis does.
  auto section = [&](unsigned bit, auto&& fill) {
    if (!(wanted & bit)) return;
    if (!out.empty()) out += "\r\n";
    fill();
  };
  section(kServer, [&] { ServerSection(ctx, config, out); });
  section(kClients, [&] { ClientsSection(ctx, config, out); });
  section(kMemory, [&] { MemorySection(ctx, out); });
  section(kPersistence, [&] { PersistenceSection(ctx, config, out); });
  section(kStats, [&] { StatsSection(ctx, out); });
  section(kReplication, [&] { ReplicationSection(out); });
  section(kCpu, [&] { CpuSection(out); });
  section(kCommandStats, [&] { CommandStatsSection(ctx, out); });
  section(kErrorStats, [&] { ErrorStatsSection(out); });
  section(kLatencyStats, [&] { LatencyStatsSection(ctx, config, out); });
  // redis-cli --cluster checks cluster_enabled here.
  section(kCluster, [&] {
    out +=
        std::string("# Cluster\r\ncluster_enabled:") + (cluster::Instance() ? "1" : "0") + "\r\n";
  });
  section(kKeyspace, [&] { KeyspaceSection(ctx, out); });
  section(kLimiters, [&] { LimitersSection(ctx, out); });
  section(kNativeScripts, [&] { NativeScriptsSection(ctx, out); });
  ctx.out.Verbatim("txt", out);
}

}  // namespace

void RegisterInfoCommand(CommandTable& table) {
  table.Add(ServerSpec("info", -1, kLoading | kStale, Info,
                       "Returns information and statistics about the server.", "1.0.0",
                       "[section [section ...]]"));
}

}  // namespace sluice::server
