// Server configuration: defaults, the redis.conf-style file, command-line flags, and the option
// table behind --help, CONFIG GET and CONFIG SET. One table describes every option (name,
// default, meaning, how to parse and print it, whether CONFIG SET may change it at run time), so
// the file, the flags, the help text and CONFIG never disagree.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/core/tls_config.h"
#include "sluice/store.h"

namespace sluice::server {

// The appendfsync name of a durability mode: "always", "everysec" or "no".
const char* DurabilityName(Durability d);

// One class of client-output-buffer-limit: a client whose pending replies exceed `hard` bytes,
// or exceed `soft` bytes for longer than `soft_seconds`, is disconnected. 0 disables a limit.
struct OutputBufferLimit {
  int64_t hard = 0;
  int64_t soft = 0;
  int64_t soft_seconds = 0;
  bool operator==(const OutputBufferLimit&) const = default;
};
// client-output-buffer-limit's classes, in Redis's order (replica is shown as "slave").
enum OutputBufferClass { kObufNormal = 0, kObufReplica = 1, kObufPubsub = 2 };

// A plain value type; fields state their defaults.
struct Config {
  int port = 6379;                                 // TCP port
  std::vector<std::string> bind = {"127.0.0.1"};   // listen addresses
  std::string dir = "./data";                      // data directory
  int threads = 0;                                 // I/O threads; 0: usable cores
  Durability appendfsync = Durability::kEverySec;  // always|everysec|no
  std::string requirepass;                         // empty: no password
  int64_t maxclients = 10000;                      // connected clients at most
  int64_t timeout = 0;                             // idle seconds before closing; 0: never
  int64_t proto_max_bulk_len = 512LL << 20;        // bytes in one bulk argument
  bool enable_debug_command = false;               // DEBUG allowed
  bool protected_mode = true;  // without requirepass, only loopback clients are served
  // Redis 7.0's defaults; only the normal class applies to Sluice's clients.
  OutputBufferLimit client_output_buffer_limit[3] = {
      {0, 0, 0}, {256LL << 20, 64LL << 20, 60}, {32LL << 20, 8LL << 20, 60}};
  int64_t client_query_buffer_limit = 1LL << 30;          // unparsed input bytes per client
  WalRecovery wal_recovery = WalRecovery::kTolerateTail;  // a damaged write-ahead log
  int64_t block_cache_size = 256LL << 20;                 // RocksDB block cache bytes
  int64_t active_expire_effort = 1;                       // 1..10: Options::active_expire_effort
  MemTableKind memtable = MemTableKind::kSluice;          // the memtable's data structure
  int64_t block_size = 4096;                              // table files' data block bytes
  int64_t record_cache_size = 16LL << 20;                 // Options::record_cache_bytes (0: off)
  int64_t write_buffer_size = 256LL << 20;                // bytes per memtable before a flush
  Compression compression = Compression::kSnappy;         // table files' block compression
  int64_t list_inline_max_entries = 128;  // lists this small keep their elements in one entry
  int64_t list_inline_max_bytes = 1024;   // ... and no bigger than this (Options::list_inline_*)
  int64_t hash_inline_max_fields = 128;   // hashes this small keep their fields in one entry
  int64_t hash_inline_max_bytes = 1024;   // ... and no bigger than this (Options::hash_inline_*)
  int64_t zset_inline_max_members = 128;  // sorted sets this small keep their entries in one
  int64_t zset_inline_max_bytes = 2048;   // ... and no bigger than this (Options::zset_inline_*)
  int64_t set_inline_max_members = 128;   // sets this small keep their members in one entry
  int64_t set_inline_max_bytes = 1024;    // ... and no bigger than this (Options::set_inline_*)
  // busy-reply-threshold (alias lua-time-limit): ms a script runs before it counts as busy
  // (SCRIPT KILL may stop it, other clients get -BUSY).
  int64_t busy_reply_threshold_ms = 5000;
  // native-scripts: recognised limiter-library scripts run natively
  // (server/scripting/native/native_scripts.h).
  bool native_scripts = true;
  // notify-keyspace-events: Redis's NOTIFY_* bits (server/core/notify.h); 0 (""): none.
  int notify_keyspace_events = 0;
  std::string aclfile;  // ACL users file (ACL LOAD/SAVE); "" when none
  // `user <name> <rules...>` lines of the config file (name first), applied at startup.
  std::vector<std::vector<std::string>> users;
  // SLOWLOG: commands taking at least this many microseconds are logged (-1: none, 0: all),
  // the newest slowlog_max_len kept.
  int64_t slowlog_log_slower_than = 10000;
  int64_t slowlog_max_len = 128;
  // Client-side caching: the tracking table holds at most this many keys (0: no limit).
  int64_t tracking_table_max_keys = 1000000;
  // HyperLogLog: a sparse representation growing past this many bytes turns dense (as Redis).
  int64_t hll_sparse_max_bytes = 3000;
  // LATENCY: events taking at least this many milliseconds are recorded (0: none).
  int64_t latency_monitor_threshold = 0;
  // Redis parameters Sluice accepts and shows but does not act on (server/core/config_compat.h):
  // canonical name -> value as CONFIG GET shows it; a name not here has Redis's default.
  std::map<std::string, std::string, std::less<>> compat;
  std::string config_file;  // absolute path of the file read, if any
  TlsConfig tls;            // tls-* options (server/core/tls_config.h)

  // ---- Replication (server/replication, docs/replication.md), Redis 7.0's names and defaults.
  std::string replicaof;                  // "host port" of the primary; "": this node is a primary
  std::string masterauth;                 // AUTH to the primary (with masteruser when set)
  std::string masteruser;                 // ""
  bool replica_read_only = true;          // replica-read-only: writes from clients get -READONLY
  bool replica_serve_stale_data = true;   // no: -MASTERDOWN while the link is down
  int64_t repl_backlog_size = 1LL << 20;  // bytes of the stream kept for partial resyncs
  int64_t repl_backlog_ttl = 3600;        // s without replicas before the backlog is freed
  int64_t repl_timeout = 60;              // s of silence before a link counts as dead
  int64_t repl_ping_replica_period = 10;  // s between the primary's PINGs in the stream
  int64_t min_replicas_to_write = 0;      // writes need this many replicas with lag <= ...
  int64_t min_replicas_max_lag = 10;      // ... this many seconds (else -NOREPLICAS)
  int64_t replica_priority = 100;         // Sentinel's promotion order (0: never)
  bool replica_announced = true;          // shown in Sentinel's replica list
  std::string replica_announce_ip;        // "": the address the primary sees
  int64_t replica_announce_port = 0;      // 0: the listening port
  // Beyond Redis: a write's reply waits until this many replicas acknowledged its offset
  // (REPLCONF ACK), batched per I/O round; 0: replies never wait (Redis's behaviour).
  int64_t replica_ack_writes = 0;
  int64_t replica_ack_timeout_ms = 1000;  // how long a held reply waits before -NOREPLICAS

  // threads with 0 resolved to the cores this process may run on (its CPU affinity: taskset,
  // a cpuset), at least 1.
  int EffectiveThreads() const;
};

// One configurable option.
struct ConfigOption {
  const char* name;          // "port", as in redis.conf and CONFIG GET
  const char* default_text;  // shown in --help
  const char* meaning;       // shown in --help
  bool mutable_at_runtime;   // CONFIG SET allowed
  bool multi_arg;            // "bind": several values on one line / flag
  // Parses `value` into `config`; returns an error reason (Redis's wording where it exists,
  // e.g. "argument couldn't be parsed into an integer") or nullopt on success.
  std::optional<std::string> (*set)(Config& config, std::string_view value);
  std::string (*get)(const Config& config);
};

// Every option, in --help order.
const std::vector<ConfigOption>& ConfigOptions();
const ConfigOption* FindConfigOption(std::string_view name);  // case-insensitive
// The replication options (config_replication.cc), appended to ConfigOptions() in one block.
void AppendReplicationOptions(std::vector<ConfigOption>* options);

// Redis's parameters that Sluice only stores: server/core/config_compat.h.

// Redis memory units: "512mb", "1gb", "100k", "42" (bytes). nullopt when malformed.
std::optional<int64_t> ParseMemory(std::string_view text);

struct ParsedCommandLine {
  Config config;
  bool show_help = false;
  bool show_version = false;
};

// `sluice-server [path/to/sluice.conf] [--name value ...]`: file first, flags override it.
// Flags are `--name value` (bind takes every value up to the next `--flag`). Returns an error
// message (for stderr, exit code 1) on an unknown option, a bad value or an unreadable file.
struct CommandLineResult {
  std::optional<ParsedCommandLine> parsed;
  std::string error;
};
CommandLineResult ParseCommandLine(int argc, const char* const* argv);

// Applies redis.conf-style text: lines `name value...`, `#` comments, blank lines, values in
// double or single quotes (with \n, \t, \", \\ escapes in double quotes). `source` names the
// file in error messages. Returns an error message, or empty on success.
std::string ApplyConfigText(Config& config, std::string_view text, std::string_view source);

// Usage text: every option, its default and meaning.
std::string UsageText(std::string_view program);

}  // namespace sluice::server
