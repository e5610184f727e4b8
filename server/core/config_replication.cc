// The replication options of the configuration (Config's replication block): Redis 7.0's names,
// defaults and ranges, plus Sluice's replica-ack-writes. Kept apart from config.cc so the
// replication room's options sit in one contiguous block.
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/core/args.h"
#include "server/core/config.h"
#include "server/core/config_rewrite.h"

namespace sluice::server {

namespace {

using Error = std::optional<std::string>;

Error Bounded(std::string_view value, int64_t lo, int64_t hi, int64_t* out) {
  std::optional<int64_t> v = ParseInt64(value);
  if (!v) return std::string("argument couldn't be parsed into an integer");
  if (*v < lo || *v > hi) {
    return "argument must be between " + std::to_string(lo) + " and " + std::to_string(hi) +
           " inclusive";
  }
  *out = *v;
  return std::nullopt;
}

Error YesNo(std::string_view value, bool* out) {
  if (EqualsIgnoreCase(value, "yes")) {
    *out = true;
  } else if (EqualsIgnoreCase(value, "no")) {
    *out = false;
  } else {
    return std::string("argument(s) must be one of the following: no, yes");
  }
  return std::nullopt;
}

std::string YesNoText(bool b) { return b ? "yes" : "no"; }

// replicaof / slaveof: "host port" or "no one" (""), as the config file's line.
Error SetReplicaOf(Config& c, std::string_view v) {
  std::vector<std::string> words;
  std::string word;
  for (char ch : v) {
    if (ch == ' ') {
      if (!word.empty()) words.push_back(word);
      word.clear();
    } else {
      word += ch;
    }
  }
  if (!word.empty()) words.push_back(word);
  if (words.empty()) {
    c.replicaof.clear();
    return std::nullopt;
  }
  if (words.size() != 2) return std::string("wrong number of arguments");
  if (EqualsIgnoreCase(words[0], "no") && EqualsIgnoreCase(words[1], "one")) {
    c.replicaof.clear();
    return std::nullopt;
  }
  int64_t port = 0;
  if (Error e = Bounded(words[1], 0, 65535, &port)) return std::string("Invalid master port");
  c.replicaof = words[0] + " " + std::to_string(port);
  return std::nullopt;
}

Error SetBacklogSize(Config& c, std::string_view v) {
  std::optional<int64_t> bytes = ParseMemory(v);
  if (!bytes || *bytes < 1) return std::string("argument must be a memory value");
  c.repl_backlog_size = *bytes < 16 * 1024 ? 16 * 1024 : *bytes;  // Redis's minimum
  return std::nullopt;
}

constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();

constexpr std::pair<const char*, const char*> kAliases[] = {
    {"lua-time-limit", "busy-reply-threshold"},
    {"slaveof", "replicaof"},
    {"slave-read-only", "replica-read-only"},
    {"slave-serve-stale-data", "replica-serve-stale-data"},
    {"slave-priority", "replica-priority"},
    {"slave-announce-ip", "replica-announce-ip"},
    {"slave-announce-port", "replica-announce-port"},
    {"repl-ping-slave-period", "repl-ping-replica-period"},
    {"min-slaves-to-write", "min-replicas-to-write"},
    {"min-slaves-max-lag", "min-replicas-max-lag"},
};

}  // namespace

std::span<const std::pair<const char*, const char*>> ConfigOptionAliases() { return kAliases; }

void AppendReplicationOptions(std::vector<ConfigOption>* o) {
  o->push_back({"replicaof", "(none)",
                "host port: replicate this primary (REPLICAOF); none: this node is a primary.",
                false, true, SetReplicaOf, [](const Config& c) { return c.replicaof; }});
  o->push_back({"slaveof", "(none)", "Old name of replicaof.", false, true, SetReplicaOf,
                [](const Config& c) { return c.replicaof; }});
  o->push_back({"masterauth", "(none)", "Password this replica sends its primary (AUTH).", true,
                false,
                [](Config& c, std::string_view v) -> Error {
                  c.masterauth = std::string(v);
                  return std::nullopt;
                },
                [](const Config& c) { return c.masterauth; }});
  o->push_back({"masteruser", "(none)", "ACL user this replica authenticates as (with masterauth).",
                true, false,
                [](Config& c, std::string_view v) -> Error {
                  c.masteruser = std::string(v);
                  return std::nullopt;
                },
                [](const Config& c) { return c.masteruser; }});
  o->push_back({"replica-read-only", "yes", "yes: a replica refuses clients' writes (READONLY).",
                true, false,
                [](Config& c, std::string_view v) { return YesNo(v, &c.replica_read_only); },
                [](const Config& c) { return YesNoText(c.replica_read_only); }});
  o->push_back({"slave-read-only", "yes", "Old name of replica-read-only.", true, false,
                [](Config& c, std::string_view v) { return YesNo(v, &c.replica_read_only); },
                [](const Config& c) { return YesNoText(c.replica_read_only); }});
  o->push_back(
      {"replica-serve-stale-data", "yes",
       "no: while the link to the primary is down a replica answers data commands MASTERDOWN.",
       true, false,
       [](Config& c, std::string_view v) { return YesNo(v, &c.replica_serve_stale_data); },
       [](const Config& c) { return YesNoText(c.replica_serve_stale_data); }});
  o->push_back({"repl-backlog-size", "1mb",
                "Bytes of the replication stream kept for partial resynchronisation (PSYNC).", true,
                false, SetBacklogSize,
                [](const Config& c) { return std::to_string(c.repl_backlog_size); }});
  o->push_back(
      {"repl-backlog-ttl", "3600",
       "Seconds without replicas before a primary frees its backlog (0: never).", true, false,
       [](Config& c, std::string_view v) { return Bounded(v, 0, kIntMax, &c.repl_backlog_ttl); },
       [](const Config& c) { return std::to_string(c.repl_backlog_ttl); }});
  o->push_back(
      {"repl-timeout", "60", "Seconds of silence before a replication link is dropped.", true,
       false, [](Config& c, std::string_view v) { return Bounded(v, 1, kIntMax, &c.repl_timeout); },
       [](const Config& c) { return std::to_string(c.repl_timeout); }});
  o->push_back({"repl-ping-replica-period", "10",
                "Seconds between the PINGs a primary sends in the replication stream.", true, false,
                [](Config& c, std::string_view v) {
                  return Bounded(v, 1, kIntMax, &c.repl_ping_replica_period);
                },
                [](const Config& c) { return std::to_string(c.repl_ping_replica_period); }});
  o->push_back({"min-replicas-to-write", "0",
                "Writes need this many replicas with lag <= min-replicas-max-lag (NOREPLICAS).",
                true, false,
                [](Config& c, std::string_view v) {
                  return Bounded(v, 0, kIntMax, &c.min_replicas_to_write);
                },
                [](const Config& c) { return std::to_string(c.min_replicas_to_write); }});
  o->push_back({"min-replicas-max-lag", "10",
                "Seconds since a replica's last ACK for it to count for min-replicas-to-write.",
                true, false,
                [](Config& c, std::string_view v) {
                  return Bounded(v, 0, kIntMax, &c.min_replicas_max_lag);
                },
                [](const Config& c) { return std::to_string(c.min_replicas_max_lag); }});
  o->push_back(
      {"replica-priority", "100",
       "Sentinel promotes the replica with the lowest priority first; 0 never.", true, false,
       [](Config& c, std::string_view v) { return Bounded(v, 0, kIntMax, &c.replica_priority); },
       [](const Config& c) { return std::to_string(c.replica_priority); }});
  o->push_back({"replica-announced", "yes", "no: Sentinel leaves this replica out of its lists.",
                true, false,
                [](Config& c, std::string_view v) { return YesNo(v, &c.replica_announced); },
                [](const Config& c) { return YesNoText(c.replica_announced); }});
  o->push_back({"replica-announce-ip", "(none)", "Address this replica tells its primary.", true,
                false,
                [](Config& c, std::string_view v) -> Error {
                  c.replica_announce_ip = std::string(v);
                  return std::nullopt;
                },
                [](const Config& c) { return c.replica_announce_ip; }});
  o->push_back(
      {"replica-announce-port", "0", "Port this replica tells its primary; 0: its listening port.",
       true, false,
       [](Config& c, std::string_view v) { return Bounded(v, 0, 65535, &c.replica_announce_port); },
       [](const Config& c) { return std::to_string(c.replica_announce_port); }});
  o->push_back(
      {"replica-ack-writes", "0",
       "Sluice: a write's reply waits until this many replicas acknowledged it.", true, false,
       [](Config& c, std::string_view v) { return Bounded(v, 0, kIntMax, &c.replica_ack_writes); },
       [](const Config& c) { return std::to_string(c.replica_ack_writes); }});
  // Redis 7.0's old names (config.c's aliases) not listed above: copies of their option.
  for (const auto& [alias, canonical] : ConfigOptionAliases()) {
    bool listed = false;
    for (const ConfigOption& option : *o) listed = listed || std::string_view(option.name) == alias;
    for (size_t i = 0; i < o->size() && !listed; ++i) {
      if (std::string_view((*o)[i].name) != canonical) continue;
      ConfigOption copy = (*o)[i];
      copy.name = alias;
      copy.meaning = "Old name of the option of the same meaning (replica-*, min-replicas-*).";
      o->push_back(copy);
      break;
    }
  }
  o->push_back({"replica-ack-timeout", "1000",
                "Sluice: ms a reply held by replica-ack-writes waits before NOREPLICAS.", true,
                false,
                [](Config& c, std::string_view v) {
                  return Bounded(v, 1, kIntMax, &c.replica_ack_timeout_ms);
                },
                [](const Config& c) { return std::to_string(c.replica_ack_timeout_ms); }});
}

}  // namespace sluice::server
