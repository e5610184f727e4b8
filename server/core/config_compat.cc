#include "server/core/config_compat.h"

#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "server/core/args.h"

namespace sluice::server {

namespace {

using K = CompatOption::Kind;
using Error = std::optional<std::string>;
constexpr uint8_t kImm = CompatOption::kImmutable;
constexpr uint8_t kHid = CompatOption::kHidden;
constexpr uint8_t kProt = CompatOption::kProtected;

}  // namespace

// Redis 7.0.15's parameters (config.c's table: names, aliases, kinds, defaults as CONFIG GET
// shows them on a server started without options, bounds), less Sluice's own options
// (config.cc) and the replication and TLS rooms' options.
const std::vector<CompatOption>& CompatOptions() {
  static const std::vector<CompatOption> options = {
      {"rdbchecksum", nullptr, K::kBool, kImm, "yes", 0, 0, nullptr},
      {"daemonize", nullptr, K::kBool, kImm, "no", 0, 0, nullptr},
      {"io-threads-do-reads", nullptr, K::kBool, kImm, "no", 0, 0, nullptr},
      {"always-show-logo", nullptr, K::kBool, kImm, "no", 0, 0, nullptr},
      {"rdbcompression", nullptr, K::kBool, 0, "yes", 0, 0, nullptr},
      {"rdb-del-sync-files", nullptr, K::kBool, 0, "no", 0, 0, nullptr},
      {"activerehashing", nullptr, K::kBool, 0, "yes", 0, 0, nullptr},
      {"stop-writes-on-bgsave-error", nullptr, K::kBool, 0, "yes", 0, 0, nullptr},
      {"set-proc-title", nullptr, K::kBool, kImm, "yes", 0, 0, nullptr},
      {"dynamic-hz", nullptr, K::kBool, 0, "yes", 0, 0, nullptr},
      {"lazyfree-lazy-eviction", nullptr, K::kBool, 0, "no", 0, 0, nullptr},
      {"lazyfree-lazy-expire", nullptr, K::kBool, 0, "no", 0, 0, nullptr},
      {"lazyfree-lazy-server-del", nullptr, K::kBool, 0, "no", 0, 0, nullptr},
      {"lazyfree-lazy-user-del", nullptr, K::kBool, 0, "no", 0, 0, nullptr},
      {"lazyfree-lazy-user-flush", nullptr, K::kBool, 0, "no", 0, 0, nullptr},
      // A replica's FLUSHALL at a full sync and maxmemory: Sluice has neither knob.
      {"replica-lazy-flush", "slave-lazy-flush", K::kBool, 0, "no", 0, 0, nullptr},
      {"replica-ignore-maxmemory", "slave-ignore-maxmemory", K::kBool, 0, "yes", 0, 0, nullptr},
      // How a full sync travels and loads: Sluice always streams its RDB from a checkpoint and
      // loads it in memory, so these are stored only (Redis's tests set them).
      {"repl-diskless-sync", nullptr, K::kBool, 0, "yes", 0, 0, nullptr},
      {"repl-diskless-sync-delay", nullptr, K::kInt, 0, "5", 0, INT32_MAX, nullptr},
      {"repl-diskless-sync-max-replicas", nullptr, K::kInt, 0, "0", 0, INT32_MAX, nullptr},
      {"repl-diskless-load", nullptr, K::kEnum, 0, "disabled", 0, 0, "disabled,on-empty-db,swapdb"},
      {"repl-disable-tcp-nodelay", nullptr, K::kBool, 0, "no", 0, 0, nullptr},
      {"replica-ignore-disk-write-errors", nullptr, K::kBool, 0, "no", 0, 0, nullptr},
      {"aof-rewrite-incremental-fsync", nullptr, K::kBool, 0, "yes", 0, 0, nullptr},
      {"no-appendfsync-on-rewrite", nullptr, K::kBool, 0, "no", 0, 0, nullptr},
      {"cluster-require-full-coverage", nullptr, K::kBool, 0, "yes", 0, 0, nullptr},
      {"rdb-save-incremental-fsync", nullptr, K::kBool, 0, "yes", 0, 0, nullptr},
      {"aof-load-truncated", nullptr, K::kBool, 0, "yes", 0, 0, nullptr},
      {"aof-use-rdb-preamble", nullptr, K::kBool, 0, "yes", 0, 0, nullptr},
      {"aof-timestamp-enabled", nullptr, K::kBool, 0, "no", 0, 0, nullptr},
      {"cluster-replica-no-failover", "cluster-slave-no-failover", K::kBool, 0, "no", 0, 0,
       nullptr},
      // Shown (and immutable) until the replication room owns it.
      {"jemalloc-bg-thread", nullptr, K::kBool, 0, "yes", 0, 0, nullptr},
      {"activedefrag", nullptr, K::kBool, 0, "no", 0, 0, nullptr},
      {"syslog-enabled", nullptr, K::kBool, kImm, "no", 0, 0, nullptr},
      {"cluster-enabled", nullptr, K::kBool, kImm, "no", 0, 0, nullptr},
      {"appendonly", nullptr, K::kBool, 0, "yes", 0, 0, nullptr},
      {"cluster-allow-reads-when-down", nullptr, K::kBool, 0, "no", 0, 0, nullptr},
      {"cluster-allow-pubsubshard-when-down", nullptr, K::kBool, 0, "yes", 0, 0, nullptr},
      {"crash-log-enabled", nullptr, K::kBool, 0, "yes", 0, 0, nullptr},
      {"crash-memcheck-enabled", nullptr, K::kBool, 0, "yes", 0, 0, nullptr},
      {"use-exit-on-panic", nullptr, K::kBool, kHid, "no", 0, 0, nullptr},
      {"disable-thp", nullptr, K::kBool, kImm, "yes", 0, 0, nullptr},
      {"cluster-allow-replica-migration", nullptr, K::kBool, 0, "yes", 0, 0, nullptr},
      {"latency-tracking", nullptr, K::kBool, 0, "yes", 0, 0, nullptr},
      {"aof-disable-auto-gc", nullptr, K::kBool, 0, "no", 0, 0, nullptr},
      {"unixsocket", nullptr, K::kNullableString, kImm, "", 0, 0, nullptr},
      {"pidfile", nullptr, K::kNullableString, kImm, "", 0, 0, nullptr},
      {"cluster-announce-ip", nullptr, K::kNullableString, 0, "", 0, 0, nullptr},
      {"cluster-config-file", nullptr, K::kString, kImm, "nodes.conf", 0, 0, nullptr},
      {"cluster-announce-hostname", nullptr, K::kNullableString, 0, "", 0, 0, nullptr},
      {"syslog-ident", nullptr, K::kString, kImm, "redis", 0, 0, nullptr},
      {"dbfilename", nullptr, K::kString, kProt, "dump.rdb", 0, 0, nullptr},
      {"appendfilename", nullptr, K::kString, kImm, "appendonly.aof", 0, 0, nullptr},
      {"appenddirname", nullptr, K::kString, kImm, "appendonlydir", 0, 0, nullptr},
      {"server_cpulist", nullptr, K::kNullableString, kImm, "", 0, 0, nullptr},
      {"bio_cpulist", nullptr, K::kNullableString, kImm, "", 0, 0, nullptr},
      {"aof_rewrite_cpulist", nullptr, K::kNullableString, kImm, "", 0, 0, nullptr},
      {"bgsave_cpulist", nullptr, K::kNullableString, kImm, "", 0, 0, nullptr},
      {"ignore-warnings", nullptr, K::kString, 0, "", 0, 0, nullptr},
      {"proc-title-template", nullptr, K::kString, 0, "{title} {listen-addr} {server-mode}", 0, 0,
       nullptr},
      {"bind-source-addr", nullptr, K::kNullableString, 0, "", 0, 0, nullptr},
      {"logfile", nullptr, K::kString, kImm, "", 0, 0, nullptr},
      {"supervised", nullptr, K::kEnum, kImm, "no", 0, 0, "upstart,systemd,auto,no"},
      {"syslog-facility", nullptr, K::kEnum, kImm, "local0", 0, 0,
       "user,local0,local1,local2,local3,local4,local5,local6,local7"},
      {"loglevel", nullptr, K::kEnum, 0, "notice", 0, 0, "debug,verbose,notice,warning"},
      {"maxmemory-policy", nullptr, K::kEnum, 0, "noeviction", 0, 0,
       "volatile-lru,volatile-lfu,volatile-random,volatile-ttl,allkeys-lru,allkeys-lfu,allkeys-"
       "random,noeviction"},
      {"oom-score-adj", nullptr, K::kEnum, 0, "no", 0, 0, "no,yes,relative>yes,absolute"},
      {"acl-pubsub-default", nullptr, K::kEnum, 0, "resetchannels", 0, 0,
       "allchannels,resetchannels"},
      {"sanitize-dump-payload", nullptr, K::kEnum, 0, "no", 0, 0, "no,yes,clients"},
      {"enable-protected-configs", nullptr, K::kEnum, kImm, "no", 0, 0, "no,yes,local"},
      {"enable-module-command", nullptr, K::kEnum, kImm, "no", 0, 0, "no,yes,local"},
      {"cluster-preferred-endpoint-type", nullptr, K::kEnum, 0, "ip", 0, 0,
       "ip,hostname,unknown-endpoint"},
      // Sluice's full sync always sends a checkpoint's RDB (docs/replication.md): stored only.
      {"repl-diskless-sync", nullptr, K::kBool, 0, "yes", 0, 0, nullptr},
      {"repl-diskless-sync-delay", nullptr, K::kInt, 0, "5", 0, INT32_MAX, nullptr},
      {"repl-diskless-sync-max-replicas", nullptr, K::kInt, 0, "0", 0, INT32_MAX, nullptr},
      {"repl-diskless-load", nullptr, K::kEnum, 0, "disabled", 0, 0, "disabled,on-empty-db,swapdb"},
      {"propagation-error-behavior", nullptr, K::kEnum, 0, "ignore", 0, 0,
       "ignore,panic,panic-on-replicas"},
      {"shutdown-on-sigint", nullptr, K::kEnumFlags, 0, "default", 0, 0,
       "default,save,nosave,now,force"},
      {"shutdown-on-sigterm", nullptr, K::kEnumFlags, 0, "default", 0, 0,
       "default,save,nosave,now,force"},
      {"databases", nullptr, K::kInt, kImm, "16", 1, INT32_MAX, nullptr},
      {"io-threads", nullptr, K::kInt, kImm, "1", 1, 128, nullptr},
      {"auto-aof-rewrite-percentage", nullptr, K::kInt, 0, "100", 0, INT32_MAX, nullptr},
      {"cluster-replica-validity-factor", "cluster-slave-validity-factor", K::kInt, 0, "10", 0,
       INT32_MAX, nullptr},
      {"list-max-listpack-size", "list-max-ziplist-size", K::kInt, 0, "-2", INT32_MIN, INT32_MAX,
       nullptr},
      {"tcp-keepalive", nullptr, K::kInt, 0, "300", 0, INT32_MAX, nullptr},
      {"cluster-migration-barrier", nullptr, K::kInt, 0, "1", 0, INT32_MAX, nullptr},
      {"active-defrag-cycle-min", nullptr, K::kInt, 0, "1", 1, 99, nullptr},
      {"active-defrag-cycle-max", nullptr, K::kInt, 0, "25", 1, 99, nullptr},
      {"active-defrag-threshold-lower", nullptr, K::kInt, 0, "10", 0, 1000, nullptr},
      {"active-defrag-threshold-upper", nullptr, K::kInt, 0, "100", 0, 1000, nullptr},
      {"lfu-log-factor", nullptr, K::kInt, 0, "10", 0, INT32_MAX, nullptr},
      {"lfu-decay-time", nullptr, K::kInt, 0, "1", 0, INT32_MAX, nullptr},
      {"maxmemory-samples", nullptr, K::kInt, 0, "5", 1, INT32_MAX, nullptr},
      {"maxmemory-eviction-tenacity", nullptr, K::kInt, 0, "10", 0, 100, nullptr},
      {"tcp-backlog", nullptr, K::kInt, kImm, "511", 0, INT32_MAX, nullptr},
      {"cluster-port", nullptr, K::kInt, kImm, "0", 0, 65535, nullptr},
      {"cluster-announce-bus-port", nullptr, K::kInt, 0, "0", 0, 65535, nullptr},
      {"cluster-announce-port", nullptr, K::kInt, 0, "0", 0, 65535, nullptr},
      {"cluster-announce-tls-port", nullptr, K::kInt, 0, "0", 0, 65535, nullptr},
      {"list-compress-depth", nullptr, K::kInt, 0, "0", 0, INT32_MAX, nullptr},
      {"rdb-key-save-delay", nullptr, K::kInt, kHid, "0", INT32_MIN, INT32_MAX, nullptr},
      {"key-load-delay", nullptr, K::kInt, kHid, "0", INT32_MIN, INT32_MAX, nullptr},
      {"hz", nullptr, K::kInt, 0, "10", 0, INT32_MAX, nullptr},
      {"watchdog-period", nullptr, K::kInt, kHid, "0", 0, INT32_MAX, nullptr},
      {"shutdown-timeout", nullptr, K::kInt, 0, "10", 0, INT32_MAX, nullptr},
      {"unixsocketperm", nullptr, K::kOctal, kImm, "0", 0, 0777, nullptr},
      {"socket-mark-id", nullptr, K::kUInt, kImm, "0", 0, UINT32_MAX, nullptr},
      {"active-defrag-max-scan-fields", nullptr, K::kInt, 0, "1000", 1, INT64_MAX, nullptr},
      {"acllog-max-len", nullptr, K::kInt, 0, "128", 0, INT64_MAX, nullptr},
      {"cluster-node-timeout", nullptr, K::kInt, 0, "15000", 0, INT64_MAX, nullptr},
      {"stream-node-max-entries", nullptr, K::kInt, 0, "100", 0, INT64_MAX, nullptr},
      {"maxmemory", nullptr, K::kUMemory, 0, "0", 0, UINT64_MAX, nullptr},
      {"cluster-link-sendbuf-limit", nullptr, K::kUMemory, 0, "0", 0, UINT64_MAX, nullptr},
      {"hash-max-listpack-entries", "hash-max-ziplist-entries", K::kUInt, 0, "512", 0, INT64_MAX,
       nullptr},
      {"set-max-intset-entries", nullptr, K::kUInt, 0, "512", 0, INT64_MAX, nullptr},
      {"zset-max-listpack-entries", "zset-max-ziplist-entries", K::kUInt, 0, "128", 0, INT64_MAX,
       nullptr},
      {"active-defrag-ignore-bytes", nullptr, K::kUMemory, 0, "104857600", 1, INT64_MAX, nullptr},
      {"hash-max-listpack-value", "hash-max-ziplist-value", K::kUMemory, 0, "64", 0, INT64_MAX,
       nullptr},
      {"stream-node-max-bytes", nullptr, K::kUMemory, 0, "4096", 0, INT64_MAX, nullptr},
      {"zset-max-listpack-value", "zset-max-ziplist-value", K::kUMemory, 0, "64", 0, INT64_MAX,
       nullptr},
      {"tracking-table-max-keys", nullptr, K::kUInt, 0, "1000000", 0, INT64_MAX, nullptr},
      {"maxmemory-clients", nullptr, K::kMemoryPercent, 0, "0", -100, INT64_MAX, nullptr},
      {"auto-aof-rewrite-min-size", nullptr, K::kMemory, 0, "67108864", 0, INT64_MAX, nullptr},
      {"loading-process-events-interval-bytes", nullptr, K::kInt, kHid, "2097152", 1024, INT32_MAX,
       nullptr},
      // Sluice keeps no RDB snapshots on a schedule and is always durable: "" and yes.
      {"save", nullptr, K::kSave, 0, "", 0, 0, nullptr},
      {"oom-score-adj-values", nullptr, K::kOomValues, 0, "0 200 800", 0, 0, nullptr},
      {"latency-tracking-info-percentiles", nullptr, K::kPercentiles, 0, "50 99 99.9", 0, 0,
       nullptr},
  };
  return options;
}

const CompatOption* FindCompatOption(std::string_view name) {
  for (const CompatOption& o : CompatOptions()) {
    if (EqualsIgnoreCase(name, o.name) || (o.alias != nullptr && EqualsIgnoreCase(name, o.alias))) {
      return &o;
    }
  }
  return nullptr;
}

namespace {

// sdssplitlen(value, " "): every single space separates (two spaces make an empty word).
std::vector<std::string> SplitSpaces(std::string_view value) {
  std::vector<std::string> words;
  if (value.empty()) return words;
  size_t start = 0;
  while (true) {
    size_t sp = value.find(' ', start);
    words.emplace_back(value.substr(start, sp == std::string_view::npos ? sp : sp - start));
    if (sp == std::string_view::npos) break;
    start = sp + 1;
  }
  return words;
}

// strtoll(text, &end, base) over the whole text, as Redis's checks (a leading space or '+' is
// accepted; "" reads as 0).
bool StrToLl(const std::string& text, int base, int64_t* out) {
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, base);
  if (*end != '\0' || errno != 0) return false;
  *out = v;
  return true;
}

struct EnumName {
  std::string name;
  std::string shown;
};

std::vector<EnumName> EnumNames(const CompatOption& o) {
  std::vector<EnumName> names;
  std::string_view all = o.names;
  while (!all.empty()) {
    size_t comma = all.find(',');
    std::string_view item = all.substr(0, comma);
    all = comma == std::string_view::npos ? std::string_view() : all.substr(comma + 1);
    size_t arrow = item.find('>');
    std::string name(item.substr(0, arrow));
    std::string shown =
        arrow == std::string_view::npos ? name : std::string(item.substr(arrow + 1));
    names.push_back({std::move(name), std::move(shown)});
  }
  return names;
}

std::string EnumError(const CompatOption& o) {
  std::string list;
  for (const EnumName& n : EnumNames(o)) list += (list.empty() ? "" : ", ") + n.name;
  return "argument(s) must be one of the following: " + list;
}

std::string BoundsError(const CompatOption& o) {
  if (o.kind == K::kOctal) {
    char buf[96];
    std::snprintf(buf, sizeof(buf),
                  "argument must be between %" PRIo64 " and %" PRIo64 " inclusive",
                  static_cast<uint64_t>(o.lo), o.hi);
    return buf;
  }
  bool is_unsigned = o.kind == K::kUInt || o.kind == K::kUMemory;
  return "argument must be between " + std::to_string(o.lo) + " and " +
         (is_unsigned ? std::to_string(o.hi) : std::to_string(static_cast<int64_t>(o.hi))) +
         " inclusive";
}

// "%f" with trailing zeros (and a trailing '.') removed, as Redis's trimDoubleString.
std::string TrimmedDouble(double d) {
  char buf[128];
  std::snprintf(buf, sizeof(buf), "%f", d);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
  }
  return s;
}

Error ParseNumber(const CompatOption& o, std::string_view value, std::string* shown) {
  std::string text(value);
  int64_t v = 0;
  bool parsed = false;
  bool memory = o.kind == K::kMemory || o.kind == K::kUMemory || o.kind == K::kMemoryPercent;
  if (memory) {
    if (std::optional<int64_t> bytes = ParseMemory(value)) {
      v = *bytes;
      parsed = true;
    }
  }
  if (!parsed && o.kind == K::kMemoryPercent && text.size() > 1 && text.back() == '%') {
    if (std::optional<int64_t> pct = ParseInt64(value.substr(0, value.size() - 1))) {
      if (*pct >= 0) {
        v = -*pct;
        parsed = true;
      }
    }
  }
  if (!parsed && o.kind == K::kOctal) parsed = StrToLl(text, 8, &v);
  if (!parsed && (o.kind == K::kInt || o.kind == K::kUInt)) {
    if (std::optional<int64_t> n = ParseInt64(value)) {
      v = *n;
      parsed = true;
    }
  }
  if (!parsed) {
    if (o.kind == K::kMemoryPercent)
      return std::string("argument must be a memory or percent value");
    if (memory) return std::string("argument must be a memory value");
    if (o.kind == K::kOctal) return std::string("argument couldn't be parsed as an octal number");
    return std::string("argument couldn't be parsed into an integer");
  }
  if (o.kind == K::kUInt || o.kind == K::kUMemory || o.kind == K::kOctal) {
    auto u = static_cast<uint64_t>(v);
    if (u > o.hi || u < static_cast<uint64_t>(o.lo)) return BoundsError(o);
  } else if (o.kind == K::kMemoryPercent && v < 0) {
    if (v < o.lo) return "percentage argument must be less or equal to " + std::to_string(-o.lo);
  } else if (v < o.lo || v > static_cast<int64_t>(o.hi)) {
    return BoundsError(o);
  }
  if (o.kind == K::kOctal) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%" PRIo64, static_cast<uint64_t>(v));
    *shown = buf;
  } else if (o.kind == K::kMemoryPercent && v < 0) {
    *shown = std::to_string(-v) + "%";
  } else if (o.kind == K::kUInt || o.kind == K::kUMemory) {
    *shown = std::to_string(static_cast<uint64_t>(v));
  } else {
    *shown = std::to_string(v);
  }
  return std::nullopt;
}

Error ParseSave(std::string_view value, std::string* shown) {
  std::vector<std::string> words = SplitSpaces(value);
  if (words.size() == 1 && words[0].empty()) words.clear();
  if (words.size() % 2 != 0) return std::string("Invalid save parameters");
  std::string out;
  for (size_t j = 0; j < words.size(); ++j) {
    int64_t v = 0;
    if (!StrToLl(words[j], 10, &v) || (j % 2 == 0 && v < 1) || (j % 2 == 1 && v < 0)) {
      return std::string("Invalid save parameters");
    }
    out += (j == 0 ? "" : " ") +
           (j % 2 == 0 ? std::to_string(v) : std::to_string(static_cast<int32_t>(v)));
  }
  *shown = out;
  return std::nullopt;
}

Error ParseOomValues(std::string_view value, std::string* shown) {
  std::vector<std::string> words = SplitSpaces(value);
  if (words.size() != 3) return std::string("wrong number of arguments");
  std::string out;
  for (const std::string& w : words) {
    int64_t v = 0;
    if (!StrToLl(w, 10, &v) || v < -2000 || v > 2000) {
      return std::string("Invalid oom-score-adj-values, elements must be between -2000 and 2000.");
    }
    out += (out.empty() ? "" : " ") + std::to_string(v);
  }
  *shown = out;
  return std::nullopt;
}

Error ParsePercentiles(std::string_view value, std::string* shown) {
  std::vector<std::string> words = SplitSpaces(value);
  if (words.size() == 1 && words[0].empty()) words.clear();
  std::string out;
  for (const std::string& w : words) {
    std::optional<long double> d = ParseLongDouble(w);
    if (!d || w.empty() || std::isspace(static_cast<unsigned char>(w[0]))) {
      return std::string("Invalid latency-tracking-info-percentiles parameters");
    }
    if (*d > 100.0L || *d < 0.0L) {
      return std::string(
          "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]");
    }
    out += (out.empty() ? "" : " ") + TrimmedDouble(static_cast<double>(*d));
  }
  *shown = out;
  return std::nullopt;
}

Error ParseEnum(const CompatOption& o, std::string_view value, std::string* shown) {
  std::vector<EnumName> names = EnumNames(o);
  if (o.kind == K::kEnum) {
    for (const EnumName& n : names) {
      if (EqualsIgnoreCase(value, n.name)) {
        *shown = n.shown;
        return std::nullopt;
      }
    }
    return EnumError(o);
  }
  // Flags: "default" is none; the others are bits shown in the table's order.
  std::vector<bool> set(names.size(), false);
  std::vector<std::string> words = SplitSpaces(value);
  if (words.empty()) return EnumError(o);
  for (const std::string& w : words) {
    bool matched = false;
    for (size_t i = 0; i < names.size(); ++i) {
      if (EqualsIgnoreCase(w, names[i].name)) {
        set[i] = i != 0;
        matched = true;
      }
    }
    if (!matched) return EnumError(o);
  }
  // shutdown-on-sig*: save and nosave exclude each other.
  if (set.size() > 2 && set[1] && set[2]) {
    return std::string("shutdown options SAVE and NOSAVE can't be used simultaneously");
  }
  std::string out;
  for (size_t i = 1; i < names.size(); ++i) {
    if (set[i]) out += (out.empty() ? "" : " ") + names[i].name;
  }
  *shown = out.empty() ? names[0].name : out;
  return std::nullopt;
}

Error ParseString(const CompatOption& o, std::string_view value) {
  std::string_view name = o.name;
  if (name == "dbfilename" && value.find('/') != std::string_view::npos) {
    return std::string("dbfilename can't be a path, just a filename");
  }
  if (name == "cluster-announce-hostname") {
    if (value.size() >= 256) return std::string("Hostnames must be less than 256 characters");
    for (char c : value) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.') {
        return std::string("Hostnames may only contain alphanumeric characters, hyphens or dots");
      }
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> SetCompatValue(Config& config, const CompatOption& o,
                                          std::string_view value) {
  std::string shown;
  Error error;
  switch (o.kind) {
    case K::kBool:
      if (EqualsIgnoreCase(value, "yes")) {
        shown = "yes";
      } else if (EqualsIgnoreCase(value, "no")) {
        shown = "no";
      } else {
        error = "argument must be 'yes' or 'no'";
      }
      break;
    case K::kString:
    case K::kNullableString:
      error = ParseString(o, value);
      shown = std::string(value);
      break;
    case K::kEnum:
    case K::kEnumFlags:
      error = ParseEnum(o, value, &shown);
      break;
    case K::kSave:
      error = ParseSave(value, &shown);
      break;
    case K::kOomValues:
      error = ParseOomValues(value, &shown);
      break;
    case K::kPercentiles:
      error = ParsePercentiles(value, &shown);
      break;
    default:
      error = ParseNumber(o, value, &shown);
      break;
  }
  if (error) return error;
  if (shown == o.default_value) {
    config.compat.erase(o.name);
  } else {
    config.compat[o.name] = std::move(shown);
  }
  return std::nullopt;
}

std::string GetCompatValue(const Config& config, const CompatOption& o) {
  auto it = config.compat.find(o.name);
  return it == config.compat.end() ? std::string(o.default_value) : it->second;
}

std::string QuoteConfigValue(std::string_view value) {
  std::string out = "\"";
  for (char c : value) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\a':
        out += "\\a";
        break;
      case '\b':
        out += "\\b";
        break;
      default:
        if (std::isprint(static_cast<unsigned char>(c))) {
          out += c;
        } else {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\x%02x", static_cast<unsigned char>(c));
          out += buf;
        }
    }
  }
  return out + "\"";
}

std::string FormatConfigMemory(int64_t bytes) {
  constexpr int64_t kGb = int64_t{1} << 30, kMb = int64_t{1} << 20, kKb = 1024;
  if (bytes != 0 && bytes % kGb == 0) return std::to_string(bytes / kGb) + "gb";
  if (bytes != 0 && bytes % kMb == 0) return std::to_string(bytes / kMb) + "mb";
  if (bytes != 0 && bytes % kKb == 0) return std::to_string(bytes / kKb) + "kb";
  return std::to_string(bytes);
}

CompatRewrite RewriteCompatOption(const Config& config, const CompatOption& o) {
  CompatRewrite out;
  std::string value = GetCompatValue(config, o);
  std::string name = o.name;
  out.force = value != o.default_value;
  switch (o.kind) {
    case K::kSave: {
      out.force = true;
      std::vector<std::string> words = SplitSpaces(value);
      if (value.empty()) out.lines.push_back("save \"\"");
      for (size_t j = 0; j + 1 < words.size(); j += 2) {
        out.lines.push_back("save " + words[j] + " " + words[j + 1]);
      }
      return out;
    }
    case K::kPercentiles:
      out.force = true;
      out.lines.push_back(name + " " + (value.empty() ? "\"\"" : value));
      return out;
    case K::kNullableString:
      if (value.empty()) return out;
      out.lines.push_back(name + " " + QuoteConfigValue(value));
      return out;
    case K::kString:
      out.lines.push_back(name + " " + QuoteConfigValue(value));
      return out;
    case K::kMemory:
    case K::kUMemory:
      out.lines.push_back(name + " " +
                          FormatConfigMemory(std::strtoll(value.c_str(), nullptr, 10)));
      return out;
    case K::kMemoryPercent:
      out.lines.push_back(name + " " +
                          (value.back() == '%'
                               ? value
                               : FormatConfigMemory(std::strtoll(value.c_str(), nullptr, 10))));
      return out;
    default:
      out.lines.push_back(name + " " + value);
      return out;
  }
}

EncodingLimits EncodingLimitsOf(const Config& config) {
  EncodingLimits limits;
  auto read = [&](const char* name, int64_t* out) {
    const CompatOption* option = FindCompatOption(name);
    if (option == nullptr) return;
    const std::string value = GetCompatValue(config, *option);
    char* end = nullptr;
    const long long n = std::strtoll(value.c_str(), &end, 10);
    if (end != value.c_str()) *out = n;
  };
  read("hash-max-listpack-entries", &limits.hash_max_listpack_entries);
  read("hash-max-listpack-value", &limits.hash_max_listpack_value);
  read("set-max-intset-entries", &limits.set_max_intset_entries);
  read("zset-max-listpack-entries", &limits.zset_max_listpack_entries);
  read("zset-max-listpack-value", &limits.zset_max_listpack_value);
  return limits;
}

}  // namespace sluice::server
