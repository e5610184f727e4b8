#include "server/core/config.h"

#include <sched.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <thread>
#include <utility>

#include "server/core/args.h"
#include "server/core/config_compat.h"
#include "server/core/notify.h"

namespace sluice::server {

const char* DurabilityName(Durability d) {
  switch (d) {
    case Durability::kAlways:
      return "always";
    case Durability::kEverySec:
      return "everysec";
    case Durability::kNo:
      return "no";
  }
  return "everysec";
}

namespace {

using Error = std::optional<std::string>;

// Redis's wording for a number outside an option's range.
std::string RangeError(int64_t lo, int64_t hi) {
  return "argument must be between " + std::to_string(lo) + " and " + std::to_string(hi) +
         " inclusive";
}

// Parses an integer option within [lo, hi] (Redis's rules: no spaces, no '+').
Error ParseBounded(std::string_view value, int64_t lo, int64_t hi, int64_t* out) {
  std::optional<int64_t> v = ParseInt64(value);
  if (!v) return "argument couldn't be parsed into an integer";
  if (*v < lo || *v > hi) return RangeError(lo, hi);
  *out = *v;
  return std::nullopt;
}

Error ParseYesNo(std::string_view value, bool* out) {
  if (EqualsIgnoreCase(value, "yes")) {
    *out = true;
  } else if (EqualsIgnoreCase(value, "no")) {
    *out = false;
  } else {
    return std::string("argument(s) must be one of the following: no, yes");
  }
  return std::nullopt;
}

Error SetPort(Config& c, std::string_view v) {
  int64_t port = 0;
  if (Error e = ParseBounded(v, 0, 65535, &port)) return e;
  c.port = static_cast<int>(port);
  return std::nullopt;
}

Error SetBind(Config& c, std::string_view v) {
  // Several addresses, separated by spaces (a file line or CONFIG SET "a b").
  std::vector<std::string> addresses;
  std::istringstream in{std::string(v)};
  for (std::string a; in >> a;) addresses.push_back(a);
  if (addresses.empty()) return std::string("at least one bind address is required");
  c.bind = std::move(addresses);
  return std::nullopt;
}

std::string GetBind(const Config& c) {
  std::string out;
  for (const std::string& a : c.bind) out += (out.empty() ? "" : " ") + a;
  return out;
}

Error SetDir(Config& c, std::string_view v) {
  if (v.empty()) return std::string("the data directory must not be empty");
  c.dir = std::string(v);
  return std::nullopt;
}

Error SetThreads(Config& c, std::string_view v) {
  int64_t n = 0;
  if (Error e = ParseBounded(v, 0, 1024, &n)) return e;
  c.threads = static_cast<int>(n);
  return std::nullopt;
}

Error SetAppendfsync(Config& c, std::string_view v) {
  if (EqualsIgnoreCase(v, "always")) {
    c.appendfsync = Durability::kAlways;
  } else if (EqualsIgnoreCase(v, "everysec")) {
    c.appendfsync = Durability::kEverySec;
  } else if (EqualsIgnoreCase(v, "no")) {
    c.appendfsync = Durability::kNo;
  } else {
    return std::string("argument(s) must be one of the following: everysec, always, no");
  }
  return std::nullopt;
}

Error SetRequirepass(Config& c, std::string_view v) {
  c.requirepass = std::string(v);
  return std::nullopt;
}

Error SetMaxclients(Config& c, std::string_view v) {
  return ParseBounded(v, 1, 4294967295LL, &c.maxclients);
}

Error SetTimeout(Config& c, std::string_view v) {
  return ParseBounded(v, 0, std::numeric_limits<int32_t>::max(), &c.timeout);
}

Error SetProtoMaxBulkLen(Config& c, std::string_view v) {
  std::optional<int64_t> bytes = ParseMemory(v);
  if (!bytes) return std::string("argument must be a memory value");
  constexpr int64_t kMin = 1024 * 1024;  // Redis's lower bound
  if (*bytes < kMin) return RangeError(kMin, std::numeric_limits<int64_t>::max());
  c.proto_max_bulk_len = *bytes;
  return std::nullopt;
}

Error SetDebug(Config& c, std::string_view v) { return ParseYesNo(v, &c.enable_debug_command); }

// Redis's wording for its boolean options.
Error SetProtectedMode(Config& c, std::string_view v) {
  if (ParseYesNo(v, &c.protected_mode)) return std::string("argument must be 'yes' or 'no'");
  return std::nullopt;
}

Error SetBlockCacheSize(Config& c, std::string_view v) {
  std::optional<int64_t> bytes = ParseMemory(v);
  if (!bytes) return std::string("argument must be a memory value");
  constexpr int64_t kMin = 1024 * 1024;
  if (*bytes < kMin) return RangeError(kMin, std::numeric_limits<int64_t>::max());
  c.block_cache_size = *bytes;
  return std::nullopt;
}

// "class hard soft seconds [class hard soft seconds ...]" with Redis's classes and wording;
// every group is checked before any is applied. An empty value changes nothing.
Error SetOutputBufferLimit(Config& c, std::string_view v) {
  std::vector<std::string> words;
  std::istringstream in{std::string(v)};
  for (std::string w; in >> w;) words.push_back(w);
  if (words.size() % 4 != 0) {
    return std::string("Wrong number of arguments in buffer limit configuration.");
  }
  OutputBufferLimit limits[3];
  std::copy(std::begin(c.client_output_buffer_limit), std::end(c.client_output_buffer_limit),
            limits);
  for (size_t i = 0; i < words.size(); i += 4) {
    int cls = -1;
    if (EqualsIgnoreCase(words[i], "normal")) cls = kObufNormal;
    if (EqualsIgnoreCase(words[i], "replica") || EqualsIgnoreCase(words[i], "slave")) {
      cls = kObufReplica;
    }
    if (EqualsIgnoreCase(words[i], "pubsub")) cls = kObufPubsub;
    if (cls < 0)
      return std::string("Invalid client class specified in buffer limit configuration.");
    std::optional<int64_t> hard = ParseMemory(words[i + 1]);
    std::optional<int64_t> soft = ParseMemory(words[i + 2]);
    std::optional<int64_t> seconds = ParseInt64(words[i + 3]);
    if (!hard || !soft || !seconds || *seconds < 0) {
      return std::string(
          "Error in hard, soft or soft_seconds setting in buffer limit configuration.");
    }
    limits[cls] = OutputBufferLimit{*hard, *soft, *seconds};
  }
  std::copy(std::begin(limits), std::end(limits), c.client_output_buffer_limit);
  return std::nullopt;
}

std::string GetOutputBufferLimit(const Config& c) {
  static constexpr const char* kNames[] = {"normal", "slave", "pubsub"};
  std::string out;
  for (int i = 0; i < 3; ++i) {
    const OutputBufferLimit& l = c.client_output_buffer_limit[i];
    out += (i == 0 ? "" : " ") + std::string(kNames[i]) + " " + std::to_string(l.hard) + " " +
           std::to_string(l.soft) + " " + std::to_string(l.soft_seconds);
  }
  return out;
}

constexpr std::pair<const char*, WalRecovery> kWalRecoveryNames[] = {
    {"tolerate-tail", WalRecovery::kTolerateTail},
    {"absolute", WalRecovery::kAbsolute},
    {"point-in-time", WalRecovery::kPointInTime},
    {"skip-damaged", WalRecovery::kSkipDamaged},
};

Error SetWalRecovery(Config& c, std::string_view v) {
  for (const auto& [name, mode] : kWalRecoveryNames) {
    if (EqualsIgnoreCase(v, name)) {
      c.wal_recovery = mode;
      return std::nullopt;
    }
  }
  return std::string(
      "argument(s) must be one of the following: tolerate-tail, absolute, point-in-time, "
      "skip-damaged");
}

std::string GetWalRecovery(const Config& c) {
  for (const auto& [name, mode] : kWalRecoveryNames) {
    if (mode == c.wal_recovery) return name;
  }
  return "tolerate-tail";
}

Error SetMemtable(Config& c, std::string_view v) {
  if (EqualsIgnoreCase(v, "sluice")) {
    c.memtable = MemTableKind::kSluice;
  } else if (EqualsIgnoreCase(v, "rocksdb")) {
    c.memtable = MemTableKind::kRocksDb;
  } else {
    return std::string("argument(s) must be one of the following: sluice, rocksdb");
  }
  return std::nullopt;
}

Error SetBlockSize(Config& c, std::string_view v) {
  std::optional<int64_t> bytes = ParseMemory(v);
  if (!bytes) return std::string("argument must be a memory value");
  constexpr auto kMin = static_cast<int64_t>(Options::kMinBlockBytes);
  constexpr auto kMax = static_cast<int64_t>(Options::kMaxBlockBytes);
  if (*bytes < kMin || *bytes > kMax) return RangeError(kMin, kMax);
  c.block_size = *bytes;
  return std::nullopt;
}

Error SetRecordCacheSize(Config& c, std::string_view v) {
  std::optional<int64_t> bytes = ParseMemory(v);
  if (!bytes) return std::string("argument must be a memory value");
  c.record_cache_size = *bytes;
  return std::nullopt;
}

Error SetWriteBufferSize(Config& c, std::string_view v) {
  std::optional<int64_t> bytes = ParseMemory(v);
  if (!bytes) return std::string("argument must be a memory value");
  constexpr int64_t kMin = 1024 * 1024;
  constexpr int64_t kMax = int64_t{4} << 30;  // one memtable; more only delays flushes
  if (*bytes < kMin || *bytes > kMax) return RangeError(kMin, kMax);
  c.write_buffer_size = *bytes;
  return std::nullopt;
}

constexpr std::pair<const char*, Compression> kCompressionNames[] = {
    {"snappy", Compression::kSnappy},
    {"lz4", Compression::kLz4},
    {"zstd", Compression::kZstd},
    {"none", Compression::kNone}};

Error SetCompression(Config& c, std::string_view v) {
  for (const auto& [name, kind] : kCompressionNames) {
    if (EqualsIgnoreCase(v, name)) {
      c.compression = kind;
      return std::nullopt;
    }
  }
  return std::string("argument(s) must be one of the following: snappy, lz4, zstd, none");
}

std::string GetCompression(const Config& c) {
  for (const auto& [name, kind] : kCompressionNames) {
    if (kind == c.compression) return name;
  }
  return "snappy";
}

Error SetQueryBufferLimit(Config& c, std::string_view v) {
  std::optional<int64_t> bytes = ParseMemory(v);
  if (!bytes) return std::string("argument must be a memory value");
  constexpr int64_t kMin = 1024 * 1024;  // Redis's lower bound
  if (*bytes < kMin) return RangeError(kMin, std::numeric_limits<int64_t>::max());
  c.client_query_buffer_limit = *bytes;
  return std::nullopt;
}

// The inline limits of lists, hashes and sorted sets (Options::*_inline_max_*): a count up to
// 4096, and bytes as a memory value up to 64 KB (every write of an inline collection rewrites
// it whole, so they stay small).
template <int64_t Config::*kField>
Error SetInlineMaxCount(Config& c, std::string_view v) {
  return ParseBounded(v, 0, 4096, &(c.*kField));
}

template <int64_t Config::*kField>
Error SetInlineMaxBytes(Config& c, std::string_view v) {
  std::optional<int64_t> bytes = ParseMemory(v);
  if (!bytes) return std::string("argument must be a memory value");
  constexpr int64_t kMax = 64 * 1024;
  if (*bytes < 0 || *bytes > kMax) return RangeError(0, kMax);
  c.*kField = *bytes;
  return std::nullopt;
}

template <int64_t Config::*kField>
std::string GetInt(const Config& c) {
  return std::to_string(c.*kField);
}

Error SetBusyReplyThreshold(Config& c, std::string_view v) {
  return ParseBounded(v, 0, std::numeric_limits<int64_t>::max(), &c.busy_reply_threshold_ms);
}

Error SetNativeScripts(Config& c, std::string_view v) { return ParseYesNo(v, &c.native_scripts); }

Error SetNotifyKeyspaceEvents(Config& c, std::string_view v) {
  std::optional<int> flags = ParseNotifyClasses(v);
  if (!flags) return std::string("Invalid event class character. Use 'Ag$lshzxeKEtmdn'.");
  c.notify_keyspace_events = *flags;
  return std::nullopt;
}

Error SetSlowlogSlowerThan(Config& c, std::string_view v) {
  return ParseBounded(v, -1, std::numeric_limits<int64_t>::max(), &c.slowlog_log_slower_than);
}

Error SetSlowlogMaxLen(Config& c, std::string_view v) {
  return ParseBounded(v, 0, std::numeric_limits<int64_t>::max(), &c.slowlog_max_len);
}

Error SetLatencyMonitorThreshold(Config& c, std::string_view v) {
  return ParseBounded(v, 0, std::numeric_limits<int64_t>::max(), &c.latency_monitor_threshold);
}

Error SetTrackingTableMaxKeys(Config& c, std::string_view v) {
  return ParseBounded(v, 0, std::numeric_limits<int64_t>::max(), &c.tracking_table_max_keys);
}

Error SetHllSparseMaxBytes(Config& c, std::string_view v) {
  std::optional<int64_t> bytes = ParseMemory(v);
  // Redis refuses a negative value as it refuses text: not a memory value.
  if (!bytes || *bytes < 0) return std::string("argument must be a memory value");
  c.hll_sparse_max_bytes = *bytes;
  return std::nullopt;
}

Error SetActiveExpireEffort(Config& c, std::string_view v) {
  return ParseBounded(v, 1, 10, &c.active_expire_effort);
}

}  // namespace

// The cores this process may run on (taskset, a cgroup cpuset): a thread per core it cannot use
// only adds context switches. hardware_concurrency() counts every online core.
int Config::EffectiveThreads() const {
  if (threads > 0) return threads;
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0 && CPU_COUNT(&allowed) > 0) {
    return CPU_COUNT(&allowed);
  }
  unsigned cores = std::thread::hardware_concurrency();
  return cores == 0 ? 1 : static_cast<int>(cores);
}

// The replication options (config_replication.cc) follow the others, in one block.
static std::vector<ConfigOption> WithReplicationOptions(std::vector<ConfigOption> options) {
  AppendReplicationOptions(&options);
  return options;
}

const std::vector<ConfigOption>& ConfigOptions() {
  static const std::vector<ConfigOption> options = WithReplicationOptions({
      {"port", "6379", "TCP port to listen on.", true, false, SetPort,
       [](const Config& c) { return std::to_string(c.port); }},
      {"bind", "127.0.0.1",
       "Addresses to listen on, space separated; * is every IPv4 address, a - prefix "
       "marks one as optional.",
       true, true, SetBind, GetBind},
      {"dir", "./data", "Data directory (created if missing).", false, false, SetDir,
       [](const Config& c) { return c.dir; }},
      {"threads", "0", "I/O threads; 0 means one per core the process may run on.", false, false,
       SetThreads, [](const Config& c) { return std::to_string(c.threads); }},
      {"appendfsync", "everysec",
       "always|everysec|no: fsync before each reply batch, once a second, or when the OS decides "
       "(every mode survives a crash of the process).",
       true, false, SetAppendfsync,
       [](const Config& c) -> std::string { return DurabilityName(c.appendfsync); }},
      {"requirepass", "(none)", "Password clients must send with AUTH before other commands.", true,
       false, SetRequirepass, [](const Config& c) { return c.requirepass; }},
      {"aclfile", "(none)", "File of ACL users (ACL LOAD/SAVE), read at startup.", false, false,
       [](Config& c, std::string_view v) -> Error {
         c.aclfile = std::string(v);
         return std::nullopt;
       },
       [](const Config& c) { return c.aclfile; }},
      {"maxclients", "10000", "Maximum number of connected clients.", true, false, SetMaxclients,
       [](const Config& c) { return std::to_string(c.maxclients); }},
      {"timeout", "0", "Close a client after this many idle seconds; 0 means never.", true, false,
       SetTimeout, [](const Config& c) { return std::to_string(c.timeout); }},
      {"proto-max-bulk-len", "512mb",
       "Largest bulk argument and string value (memory units: 100k, 512mb, 1gb).", true, false,
       SetProtoMaxBulkLen, [](const Config& c) { return std::to_string(c.proto_max_bulk_len); }},
      {"block-cache-size", "256mb",
       "RocksDB block cache: data blocks plus the index and filter partitions (pinned, ~1.6 "
       "bytes per key); size it to hold the live keys (memory units).",
       true, false, SetBlockCacheSize,
       [](const Config& c) { return std::to_string(c.block_cache_size); }},
      {"active-expire-effort", "1",
       "1..10: how hard the background expiry cycle works to remove expired keys nobody reads "
       "(Redis's setting): more keys per sample, a lower share of expired keys to go on, and "
       "25% up to 43% of each 100 ms cycle. Raise it when expired keys pile up under churn.",
       true, false, SetActiveExpireEffort,
       [](const Config& c) { return std::to_string(c.active_expire_effort); }},
      {"block-size", "4kb",
       "Table files' data block size before compression (memory units, 256 to 1mb): a read "
       "of a key not in the block cache reads, checks and decompresses one block; smaller "
       "blocks read such keys faster, for more disk and a larger index. Files written from now "
       "on.",
       false, false, SetBlockSize, [](const Config& c) { return std::to_string(c.block_size); }},
      {"record-cache-size", "16mb",
       "Records of keys and collections' metadata that reads found in table files, kept in "
       "memory until a write touches their lock stripe (hot read-mostly keys after a flush); "
       "records with a TTL are not kept. 0 turns it off (memory units).",
       false, false, SetRecordCacheSize,
       [](const Config& c) { return std::to_string(c.record_cache_size); }},
      {"memtable", "sluice",
       "The memtable's data structure: sluice (Sluice's hash index and sorted runs, cheaper per "
       "write and read) or rocksdb (RocksDB's own skiplist); the same data either way.",
       false, false, SetMemtable,
       [](const Config& c) -> std::string {
         return c.memtable == MemTableKind::kSluice ? "sluice" : "rocksdb";
       }},
      {"write-buffer-size", "256mb",
       "Writes each memtable collects before it is flushed to a table file (memory units, 1mb "
       "to 4gb); all memtables together stay under twice this.",
       false, false, SetWriteBufferSize,
       [](const Config& c) { return std::to_string(c.write_buffer_size); }},
      {"compression", "snappy",
       "Table files' block compression: snappy, lz4, zstd or none; files are rewritten with a "
       "new choice as compaction reaches them.",
       false, false, SetCompression, GetCompression},
      {"list-inline-max-entries", "128",
       "Lists of at most this many elements (and list-inline-max-bytes) are stored as one entry: "
       "a list command on them is one read and one write. 0: one entry per element always.",
       false, false, SetInlineMaxCount<&Config::list_inline_max_entries>,
       GetInt<&Config::list_inline_max_entries>},
      {"list-inline-max-bytes", "1kb",
       "The byte limit of an inline list (its elements plus 1-2 bytes each; memory units, at "
       "most 64kb): each write rewrites the whole list.",
       false, false, SetInlineMaxBytes<&Config::list_inline_max_bytes>,
       GetInt<&Config::list_inline_max_bytes>},
      {"hash-inline-max-fields", "128",
       "Hashes of at most this many fields (and hash-inline-max-bytes), in Redis's listpack "
       "encoding, are stored as one entry: HGETALL is one read, HSET one read and one write. 0: "
       "one entry per field always.",
       false, false, SetInlineMaxCount<&Config::hash_inline_max_fields>,
       GetInt<&Config::hash_inline_max_fields>},
      {"hash-inline-max-bytes", "1kb",
       "The byte limit of an inline hash (its fields and values plus 1-2 bytes each; memory "
       "units, at most 64kb): each write rewrites the whole hash.",
       false, false, SetInlineMaxBytes<&Config::hash_inline_max_bytes>,
       GetInt<&Config::hash_inline_max_bytes>},
      {"zset-inline-max-members", "128",
       "Sorted sets of at most this many members (and zset-inline-max-bytes), in Redis's "
       "listpack encoding, are stored as one entry: a command on them is one read and one "
       "write. 0: entries in their column families always.",
       false, false, SetInlineMaxCount<&Config::zset_inline_max_members>,
       GetInt<&Config::zset_inline_max_members>},
      {"zset-inline-max-bytes", "2kb",
       "The byte limit of an inline sorted set (two entries a member: about 2 x (member + 11) "
       "bytes; memory units, at most 64kb): each write rewrites the whole set.",
       false, false, SetInlineMaxBytes<&Config::zset_inline_max_bytes>,
       GetInt<&Config::zset_inline_max_bytes>},
      {"set-inline-max-members", "128",
       "Sets this small (and within set-inline-max-bytes) are one entry. 0: never.", false, false,
       SetInlineMaxCount<&Config::set_inline_max_members>, GetInt<&Config::set_inline_max_members>},
      {"set-inline-max-bytes", "1kb",
       "The byte limit of an inline set (its members plus 3 bytes each; memory units, at most "
       "64kb): each write rewrites the whole set.",
       false, false, SetInlineMaxBytes<&Config::set_inline_max_bytes>,
       GetInt<&Config::set_inline_max_bytes>},
      {"protected-mode", "yes",
       "yes: without requirepass, clients from non-loopback addresses are refused (DENIED).", true,
       false, SetProtectedMode,
       [](const Config& c) -> std::string { return c.protected_mode ? "yes" : "no"; }},
      {"client-output-buffer-limit", "normal 0 0 0 replica 256mb 64mb 60 pubsub 32mb 8mb 60",
       "class hard soft seconds: close a client whose pending replies exceed hard bytes, or soft "
       "bytes for longer than seconds (0: no limit); classes normal, replica, pubsub (only "
       "normal applies to Sluice's clients).",
       true, true, SetOutputBufferLimit, GetOutputBufferLimit},
      {"client-query-buffer-limit", "1gb",
       "Close a client whose unparsed input exceeds this (memory units).", true, false,
       SetQueryBufferLimit,
       [](const Config& c) { return std::to_string(c.client_query_buffer_limit); }},
      {"busy-reply-threshold", "5000",
       "Milliseconds a script may run before SCRIPT KILL can stop it and other clients get "
       "-BUSY.",
       true, false, SetBusyReplyThreshold,
       [](const Config& c) { return std::to_string(c.busy_reply_threshold_ms); }},
      {"slowlog-log-slower-than", "10000",
       "Log commands that take at least this many microseconds in SLOWLOG (-1: none, 0: all).",
       true, false, SetSlowlogSlowerThan,
       [](const Config& c) { return std::to_string(c.slowlog_log_slower_than); }},
      {"slowlog-max-len", "128", "The most entries SLOWLOG keeps (the oldest go first).", true,
       false, SetSlowlogMaxLen, [](const Config& c) { return std::to_string(c.slowlog_max_len); }},
      {"tracking-table-max-keys", "1000000",
       "Client-side caching: the most keys the tracking table holds (0: no limit); past it keys "
       "are invalidated.",
       true, false, SetTrackingTableMaxKeys,
       [](const Config& c) { return std::to_string(c.tracking_table_max_keys); }},
      {"hll-sparse-max-bytes", "3000",
       "A HyperLogLog's sparse form past this many bytes turns dense (memory units), as Redis.",
       true, false, SetHllSparseMaxBytes,
       [](const Config& c) { return std::to_string(c.hll_sparse_max_bytes); }},
      {"latency-monitor-threshold", "0",
       "LATENCY records events (commands, expiry cycles) taking at least this many "
       "milliseconds; 0 records none.",
       true, false, SetLatencyMonitorThreshold,
       [](const Config& c) { return std::to_string(c.latency_monitor_threshold); }},
      {"lua-time-limit", "5000", "Old name of busy-reply-threshold.", true, false,
       SetBusyReplyThreshold,
       [](const Config& c) { return std::to_string(c.busy_reply_threshold_ms); }},
      {"wal-recovery-mode", "tolerate-tail",
       "A damaged write-ahead log at start: tolerate-tail loads a log cut short by a crash (with "
       "a warning) and refuses damage elsewhere; absolute refuses both; point-in-time (load up "
       "to the damage) and skip-damaged (load every intact record) accept losing data.",
       false, false, SetWalRecovery, GetWalRecovery},
      {"notify-keyspace-events", "",
       "Keyspace notifications, Redis's classes: K keyspace, E keyevent, g generic, $ string, l "
       "list, s set, h hash, z zset, x expired, e evicted, t stream, m key miss, d module, n new "
       "key, A alias for g$lshzxetd (\"\": none). See docs/server.md.",
       true, false, SetNotifyKeyspaceEvents,
       [](const Config& c) { return FormatNotifyClasses(c.notify_keyspace_events); }},
      {"native-scripts", "yes",
       "yes runs the known limiter-library scripts (rate-limiter-flexible, limits, "
       "rate-limit-redis, @fastify/rate-limit, go-redis/redis_rate, ulule/limiter) natively on "
       "EVAL/EVALSHA; no runs them in Lua.",
       true, false, SetNativeScripts,
       [](const Config& c) -> std::string { return c.native_scripts ? "yes" : "no"; }},
      {"enable-debug-command", "no",
       "yes allows DEBUG (e.g. DEBUG CLOCK SET/ADVANCE/REAL, for tests).", false, false, SetDebug,
       [](const Config& c) -> std::string { return c.enable_debug_command ? "yes" : "no"; }},
  });
  // The tls-* options (server/core/tls_config.cc) follow the others.
  static const std::vector<ConfigOption> all = [] {
    std::vector<ConfigOption> v = options;
    AppendTlsConfigOptions(&v);
    return v;
  }();
  return all;
}

const ConfigOption* FindConfigOption(std::string_view name) {
  for (const ConfigOption& option : ConfigOptions()) {
    if (EqualsIgnoreCase(option.name, name)) return &option;
  }
  return nullptr;
}

std::optional<int64_t> ParseMemory(std::string_view text) {
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits == 0 || digits > 19) return std::nullopt;
  std::string_view unit = text.substr(digits);
  int64_t mul = 1;
  if (unit.empty() || EqualsIgnoreCase(unit, "b")) {
    mul = 1;
  } else if (EqualsIgnoreCase(unit, "k")) {
    mul = 1000;
  } else if (EqualsIgnoreCase(unit, "kb")) {
    mul = 1024;
  } else if (EqualsIgnoreCase(unit, "m")) {
    mul = 1000 * 1000;
  } else if (EqualsIgnoreCase(unit, "mb")) {
    mul = 1024 * 1024;
  } else if (EqualsIgnoreCase(unit, "g")) {
    mul = 1000LL * 1000 * 1000;
  } else if (EqualsIgnoreCase(unit, "gb")) {
    mul = 1024LL * 1024 * 1024;
  } else {
    return std::nullopt;
  }
  uint64_t value = 0;
  for (char c : text.substr(0, digits)) value = value * 10 + static_cast<uint64_t>(c - '0');
  constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (value > kMax / static_cast<uint64_t>(mul)) return std::nullopt;
  return static_cast<int64_t>(value * static_cast<uint64_t>(mul));
}

std::string UsageText(std::string_view program) {
  std::string out;
  out += "Usage: " + std::string(program) + " [/path/to/sluice.conf] [--option value ...]\n";
  out += "       " + std::string(program) + " --help | --version\n\n";
  out += "Sluice: a Redis-protocol server with native rate limiters, state in RocksDB.\n";
  out += "Options come from the file (lines \"name value\", # comments, quoted values) and\n";
  out +=
      "from flags \"--name value\"; flags override the file. Memory units: 100k, 512mb, 1gb.\n\n";
  out += "Options:\n";
  for (const ConfigOption& o : ConfigOptions()) {
    char line[512];
    std::snprintf(line, sizeof(line), "  --%-22s default: %s%s\n      %s\n", o.name, o.default_text,
                  o.mutable_at_runtime ? "  (CONFIG SET can change it)" : "", o.meaning);
    out += line;
  }
  out += "\nExamples:\n";
  out += "  " + std::string(program) + "\n";
  out += "  " + std::string(program) + " --port 7000 --dir /var/lib/sluice --appendfsync always\n";
  out += "  " + std::string(program) + " sluice.conf --bind 127.0.0.1 ::1\n";
  return out;
}

}  // namespace sluice::server

namespace sluice::server {

namespace {

// Applies `name values...` to config; returns an error reason or empty.
std::string ApplyOption(Config& config, std::string_view name,
                        const std::vector<std::string>& values) {
  const ConfigOption* option = FindConfigOption(name);
  if (option == nullptr) {
    const CompatOption* compat = FindCompatOption(name);
    if (compat == nullptr) return "unknown option '" + std::string(name) + "'";
    std::string joined;
    for (size_t i = 0; i < values.size(); ++i) joined += (i == 0 ? "" : " ") + values[i];
    if (Error e = SetCompatValue(config, *compat, joined)) {
      return "bad value '" + joined + "' for '" + compat->name + "': " + *e;
    }
    return {};
  }
  if (values.empty() || (values.size() > 1 && !option->multi_arg)) {
    return "wrong number of arguments for '" + std::string(option->name) + "'";
  }
  std::string joined;
  for (const std::string& v : values) joined += (joined.empty() ? "" : " ") + v;
  if (option->multi_arg && values.size() == 1 && values[0].empty()) joined.clear();
  if (Error e = option->set(config, joined)) {
    return "bad value '" + joined + "' for '" + option->name + "': " + *e;
  }
  return {};
}

}  // namespace

std::string ApplyConfigText(Config& config, std::string_view text, std::string_view source) {
  size_t line_no = 0;
  // `save` lines add up, as in Redis: the first replaces the default, each adds its pairs.
  std::optional<std::string> saves;
  while (!text.empty()) {
    size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    ++line_no;
    size_t start = line.find_first_not_of(" \t\r");
    if (start == std::string_view::npos || line[start] == '#') continue;
    std::vector<std::string> words;
    std::string where = std::string(source) + ":" + std::to_string(line_no) + ": ";
    if (!SplitArgs(line, &words)) return where + "unbalanced quotes";
    if (words.empty()) continue;
    std::vector<std::string> values(words.begin() + 1, words.end());
    if (EqualsIgnoreCase(words[0], "user")) {  // an ACL user: checked when the table exists
      if (values.empty()) return where + "wrong number of arguments";
      config.users.push_back(std::move(values));
      continue;
    }
    if (EqualsIgnoreCase(words[0], "save") && saves && !(values.size() == 1 && values[0].empty())) {
      values.insert(values.begin(), *saves);
    }
    std::string error = ApplyOption(config, words[0], values);
    if (!error.empty()) return where + error;
    if (EqualsIgnoreCase(words[0], "save")) {
      saves = GetCompatValue(config, *FindCompatOption("save"));
      if (saves->empty()) saves.reset();
    }
  }
  return {};
}

CommandLineResult ParseCommandLine(int argc, const char* const* argv) {
  ParsedCommandLine parsed;
  int i = 1;
  if (i < argc && argv[i][0] != '-') {
    std::string path = argv[i++];
    std::ifstream file(path, std::ios::binary);
    if (!file) return {std::nullopt, "cannot read config file '" + path + "'"};
    std::stringstream text;
    text << file.rdbuf();
    std::string error = ApplyConfigText(parsed.config, text.str(), path);
    if (!error.empty()) return {std::nullopt, error};
    std::error_code ec;
    std::filesystem::path absolute = std::filesystem::absolute(path, ec);
    parsed.config.config_file = ec ? path : absolute.string();
  }
  Config& config = parsed.config;
  while (i < argc) {
    std::string_view flag = argv[i++];
    if (flag == "--help" || flag == "-h") {
      parsed.show_help = true;
      continue;
    }
    if (flag == "--version" || flag == "-v") {
      parsed.show_version = true;
      continue;
    }
    if (flag.size() < 3 || flag.substr(0, 2) != "--") {
      return {std::nullopt, "unexpected argument '" + std::string(flag) +
                                "' (options are --name value; the config file comes first)"};
    }
    std::string_view name = flag.substr(2);
    const ConfigOption* option = FindConfigOption(name);
    const CompatOption* compat = option == nullptr ? FindCompatOption(name) : nullptr;
    if (option == nullptr && compat == nullptr) {
      return {std::nullopt, "unknown option '" + std::string(flag) + "'"};
    }
    bool multi_arg = option != nullptr ? option->multi_arg : true;
    std::vector<std::string> values;
    while (i < argc && (values.empty() || multi_arg) &&
           std::string_view(argv[i]).substr(0, 2) != "--") {
      values.emplace_back(argv[i++]);
    }
    if (values.empty() && i < argc && !multi_arg) values.emplace_back(argv[i++]);
    if (values.empty()) {
      return {std::nullopt, "option '" + std::string(flag) + "' needs a value"};
    }
    std::string error = ApplyOption(config, name, values);
    if (!error.empty()) return {std::nullopt, error};
  }
  return {std::move(parsed), {}};
}

}  // namespace sluice::server
