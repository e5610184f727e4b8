// sluice-server [path/to/sluice.conf] [--option value ...]
// Exit codes: 0 after a clean shutdown (or --help/--version), 1 on a configuration, data
// directory or listening error (the reason is on stderr).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <utility>

#include "server/cluster/cluster.h"
#include "server/commands/commands.h"
#include "server/commands/rdb_load.h"
#include "server/core/command.h"
#include "server/core/command_stats.h"
#include "server/core/config.h"
#include "server/core/config_compat.h"
#include "server/core/crash_report.h"
#include "server/core/data_dir_mode.h"
#include "server/core/loading_state.h"
#include "server/core/logging.h"
#include "server/core/notify.h"
#include "server/core/open_files.h"
#include "server/core/pause_purposes.h"
#include "server/core/server_state.h"
#include "server/net/server.h"
#include "server/net/tls_context.h"
#include "server/pubsub/pubsub_registry.h"
#include "server/replication/replication.h"
#include "server/scripting/scripting_state.h"
#include "sluice/expiry_latency.h"
#include "sluice/key_slot.h"
#include "sluice/store.h"
#include "sluice/stream_nodes.h"

#ifndef SLUICE_VERSION
#define SLUICE_VERSION "unknown"
#endif

namespace {

using sluice::server::Config;
using sluice::server::DurabilityName;

std::string ExecutablePath(const char* argv0) {
  std::error_code ec;
  auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(argv0) : path.string();
}

int Fail(const std::string& message) {
  sluice::server::LogError(message);
  return 1;
}

// Sizes maxclients to the open files limit (raising the soft limit first). False when not even
// one client fits.
bool FitMaxclients(Config& config) {
  sluice::server::OpenFilesFit fit = sluice::server::FitOpenFiles(config.maxclients);
  if (fit.maxclients < 1) {
    sluice::server::LogError("the open files limit is too low to serve any client: " + fit.message);
    return false;
  }
  if (fit.maxclients < config.maxclients) {
    sluice::server::LogError("WARNING: " + fit.message);
  } else if (!fit.message.empty()) {
    sluice::server::LogInfo(fit.message);
  }
  config.maxclients = fit.maxclients;
  return true;
}

// The ACL users of the config file's `user` lines, or of the aclfile (not both, as in Redis).
std::string LoadUsers(sluice::server::ServerState& state, const sluice::server::CommandTable& table,
                      const sluice::server::Config& config) {
  if (!config.aclfile.empty() && !config.users.empty()) {
    return "Configuring Redis with users defined in redis.conf and at the same setting an ACL "
           "file path is invalid. This setup is very likely to lead to configuration errors and "
           "security holes, please define either an ACL file or declare users directly in your "
           "redis.conf, but not both.";
  }
  state.set_acl_file(config.aclfile);
  if (!config.aclfile.empty()) return sluice::server::LoadAclFile(state, config.aclfile);
  for (const std::vector<std::string>& line : config.users) {
    std::vector<std::string> rules = {"reset"};
    rules.insert(rules.end(), line.begin() + 1, line.end());
    std::string error = state.acl().SetUser(line[0], rules, table);
    if (!error.empty()) return "Error in user declaration '" + line[0] + "': " + error;
  }
  return "";
}

// The cluster state and bus, wired to replication (a cluster replica replicates from its
// master through the ordinary replica link) and the store.
std::shared_ptr<sluice::server::cluster::Cluster> MakeCluster(
    sluice::Store& store, sluice::server::ServerState& state, const Config& config,
    std::unique_ptr<sluice::server::replication::Replication>& replication) {
  sluice::server::cluster::ClusterHooks hooks;
  hooks.replicate = [&replication](const std::string& host, int port) {
    bool already = false;
    if (replication != nullptr) (void)replication->ReplicaOf(host, port, &already);
  };
  hooks.promote = [&replication] {
    if (replication != nullptr) replication->PromoteToPrimary();
  };
  hooks.repl_offset = [&replication]() -> int64_t {
    // A replica loading a full sync has no master state yet: offset 0, as Redis's
    // replicationGetSlaveOffset (CLUSTER SLOTS leaves it out, SHARDS says "loading").
    if (sluice::server::Loading()) return 0;
    return replication != nullptr ? replication->offset() : 0;
  };
  hooks.keyspace_empty = [&store] {  // db 0 only, as Redis checks (cluster mode has one db)
    auto n = store.DbSize(0);
    return n.ok() && *n == 0;
  };
  sluice::server::PubSubRegistry* pubsub = &sluice::server::PubSubOf(state);
  hooks.publish = [pubsub](const std::string& channel, const std::string& message, bool shard) {
    if (shard) {
      pubsub->PublishShard(channel, message);
    } else {
      pubsub->Publish(channel, message);
    }
  };
  hooks.shard_slots_lost = [pubsub](const sluice::server::cluster::SlotBitmap& slots) {
    pubsub->DropShardChannels([&slots](std::string_view channel) {
      const uint16_t slot = sluice::KeyHashSlot(channel);
      return slots.test(slot) ? static_cast<int>(slot) : -1;
    });
  };
  // Every waiter's first key is retried as after a FLUSHDB of db 0 (the only one in cluster
  // mode): a retry whose slot moved away is answered -MOVED (BlockedCommand::Resume) and passes
  // the wake on to the key's next waiter; one still served here parks again in its place.
  hooks.routing_changed = [&state] { state.blocking().OnCommit({}, 1u); };
  hooks.master_data_age_ms = [&replication]() -> int64_t {
    return replication != nullptr ? replication->MasterDataAgeMs() : 0;
  };
  // A manual failover pauses writers under FAILOVER's purpose (Redis's PAUSE_DURING_FAILOVER):
  // a user's CLIENT PAUSE is neither replaced nor lifted by it.
  hooks.pause_writes = [&state](int64_t until_ms) {
    if (until_ms == 0) {
      sluice::server::LiftPause(state, sluice::server::PausePurpose::kFailover);
    } else {
      sluice::server::SetPause(state, sluice::server::PausePurpose::kFailover, until_ms,
                               /*all=*/false);
    }
  };
  hooks.settings = [&state] {
    return sluice::server::cluster::ClusterSettings::From(state.config());
  };
  return std::make_shared<sluice::server::cluster::Cluster>(
      store, sluice::server::cluster::ClusterSettings::From(config), std::move(hooks));
}

// `logfile`: the log (and crash reports) go to that file, appended, instead of stderr. A relative
// path is under `dir`, as in Redis (which chdir()s there). Errors before this point stay on stderr.
bool OpenLogFile(const Config& config) {
  auto it = config.compat.find("logfile");
  if (it == config.compat.end() || it->second.empty()) return true;
  std::filesystem::path path(it->second);
  if (path.is_relative()) path = std::filesystem::path(config.dir) / path;
  if (std::freopen(path.c_str(), "a", stderr) != nullptr) return true;
  std::cout << "Can't open the log file: " << path.string() << std::endl;
  return false;
}

int Serve(Config config, const char* argv0) {
  if (!FitMaxclients(config)) return 1;
  if (config.tls.needed()) {  // checked before the data dir opens (and again by Listen)
    std::string why;
    if (sluice::server::TlsContexts::Build(config.tls, &why) == nullptr) {
      sluice::server::LogError(why);
      return Fail("Failed to configure TLS. Check logs for more info.");
    }
  }
  std::error_code ec;
  std::filesystem::create_directories(config.dir, ec);
  if (ec) return Fail("cannot use data directory '" + config.dir + "': " + ec.message());
  if (!OpenLogFile(config)) return 1;

  auto clock = std::make_shared<sluice::AdjustableClock>();
  // Declared before the store, so it outlives the store, which calls its WatchRegistry.
  sluice::server::ServerState state(config, clock);
  sluice::server::AttachScripting(state);
  sluice::server::AttachPubSub(state);
  sluice::Options options;
  options.path = config.dir;
  options.durability = config.appendfsync;
  options.clock = clock;
  options.max_value_bytes = config.proto_max_bulk_len;
  options.block_cache_bytes = static_cast<size_t>(config.block_cache_size);
  options.active_expire_effort = static_cast<int>(config.active_expire_effort);
  options.hll_sparse_max_bytes = config.hll_sparse_max_bytes;
  {
    auto compat = [&](const char* name, int64_t fallback) {
      auto it = config.compat.find(name);
      return it == config.compat.end() ? fallback : std::strtoll(it->second.c_str(), nullptr, 10);
    };
    sluice::SetStreamNodeLimits(compat("stream-node-max-bytes", 4096),
                                compat("stream-node-max-entries", 100));
    sluice::SetEncodingLimits(sluice::server::EncodingLimitsOf(config));
  }
  options.memtable = config.memtable;
  options.write_buffer_bytes = static_cast<size_t>(config.write_buffer_size);
  options.block_bytes = static_cast<size_t>(config.block_size);
  options.record_cache_bytes = static_cast<size_t>(config.record_cache_size);
  options.compression = config.compression;
  options.list_inline_max_entries = config.list_inline_max_entries;
  options.list_inline_max_bytes = static_cast<size_t>(config.list_inline_max_bytes);
  options.hash_inline_max_fields = config.hash_inline_max_fields;
  options.hash_inline_max_bytes = static_cast<size_t>(config.hash_inline_max_bytes);
  options.zset_inline_max_members = config.zset_inline_max_members;
  options.zset_inline_max_bytes = static_cast<size_t>(config.zset_inline_max_bytes);
  options.set_inline_max_members = config.set_inline_max_members;
  options.set_inline_max_bytes = static_cast<size_t>(config.set_inline_max_bytes);
  options.on_progress = [](const std::string& line) { sluice::server::LogInfo(line); };
  options.on_error = [](const std::string& line) { sluice::server::LogError(line); };
  options.wal_recovery = config.wal_recovery;
  options.mode = sluice::server::DataDirModeOf(config);  // standalone and cluster data differ
  sluice::server::LogInfo("loading: opening data dir " + config.dir);
  // Declared before the Store, so it outlives the Store's threads.
  sluice::server::ExpiredEventsObserver expired_events(state);
  std::unique_ptr<sluice::server::replication::Replication> replication;  // outlives the Store
  auto opened = sluice::Store::Open(options);
  if (!opened.ok()) {
    const std::string why = opened.status().ToString();
    const bool full = why.find("No space left on device") != std::string::npos;
    return Fail("cannot open data directory '" + config.dir + "': " + why +
                (full ? " (the disk is full: free some space and start again)" : ""));
  }
  std::unique_ptr<sluice::Store> store = std::move(opened).value();
  store->AddCommitObserver(&state.watches());
  store->AddCommitObserver(&state.blocking());
  store->AddCommitObserver(&state.dirty());     // INFO rdb_changes_since_last_save
  store->AddCommitObserver(&expired_events);    // keyspace notifications' "expired"
  store->AddCommitObserver(&state.tracking());  // client-side caching's invalidations
  // LATENCY's expire-cycle event (Redis's activeExpireCycle): an expiry cycle that ran at least
  // latency-monitor-threshold. Detached (the guard, destroyed before the Store) before the
  // Store's expiry thread stops.
  sluice::SetExpiryCycleListener([&state](int64_t micros) {
    const int64_t threshold_ms = state.latency_threshold_ms();
    if (threshold_ms > 0 && micros / 1000 >= threshold_ms) {
      state.latency().Add("expire-cycle", micros / 1000,
                          sluice::server::ServerState::RealNowMs() / 1000);
    }
  });
  struct DetachExpiryListener {
    ~DetachExpiryListener() { sluice::SetExpiryCycleListener(nullptr); }
  } detach_expiry_listener;

  state.set_executable(ExecutablePath(argv0));
  sluice::server::CommandTable table;
  sluice::server::RegisterAllCommands(table);
  state.set_commands(&table);
  if (std::string acl_error = LoadUsers(state, table, config); !acl_error.empty()) {
    return Fail(acl_error);
  }
  // FUNCTION LOAD's libraries live in one file next to the engine's (docs/scripting.md).
  state.scripting().functions.set_path(config.dir + "/sluice-functions.bin");
  if (sluice::Status fs = state.scripting().functions.LoadFromDisk(); !fs.ok()) {
    return Fail("cannot load functions: " + fs.message());
  }

  // A Redis snapshot (dbfilename, dump.rdb) in an empty data dir moves in (docs/migrating.md).
  const std::string rdb_path =
      config.dir + "/" +
      sluice::server::GetCompatValue(config, *sluice::server::FindCompatOption("dbfilename"));
  if (sluice::Status rdb =
          sluice::server::LoadRdbFileIfFresh(*store, state.scripting().functions, rdb_path);
      !rdb.ok()) {
    return Fail("cannot load the Redis snapshot: " + rdb.message());
  }

  // Cluster mode (docs/cluster.md): nodes.conf loaded (or this node's id written) before
  // serving; the bus starts once replication is up (a cluster replica replicates through it).
  std::shared_ptr<sluice::server::cluster::Cluster> cluster;
  if (sluice::server::GetCompatValue(
          config, *sluice::server::FindCompatOption("cluster-enabled")) == "yes") {
    cluster = MakeCluster(*store, state, config, replication);
    if (std::string why = cluster->Load(); !why.empty()) return Fail(why);
    state.attach_cluster(cluster);
    sluice::server::cluster::SetInstance(cluster.get());
  }

  {
    sluice::server::Server server(*store, state, table);
    sluice::Status listening = server.Listen();
    if (!listening.ok()) return Fail(listening.message());
    // Replication (docs/replication.md): the stream's hook and observer, the link to a
    // primary when replicaof is set.
    replication = std::make_unique<sluice::server::replication::Replication>(*store, state);
    sluice::server::replication::SetInstance(replication.get());
    // A full sync carries the function libraries; a replica installs its primary's.
    sluice::server::FunctionRegistry& functions = state.scripting().functions;
    replication->SetFunctionLibraries(
        [&functions] {
          std::vector<std::string> codes;
          functions.Snapshot(&codes);
          return codes;
        },
        [&functions](const std::vector<std::string>& codes) {
          if (sluice::Status s = functions.Flush(); !s.ok()) return s;
          for (const std::string& code : codes) {
            std::string name;
            if (sluice::Status s = functions.Load(code, /*replace=*/true, &name); !s.ok()) {
              return s;
            }
          }
          return sluice::Status::Ok();
        });
    replication->Start();
    if (cluster != nullptr) {
      if (std::string why = cluster->Start(); !why.empty()) return Fail(why);
    }
    std::string addresses;
    for (const std::string& a : server.ListeningAddresses()) {
      addresses += (addresses.empty() ? "" : " ") + a;
    }
    sluice::server::LogInfo(std::string("Sluice ") + SLUICE_VERSION + " ready: listening on " +
                            addresses + ", data dir " + config.dir + ", appendfsync " +
                            DurabilityName(config.appendfsync) + ", " +
                            std::to_string(config.EffectiveThreads()) + " I/O threads, pid " +
                            std::to_string(getpid()));
    server.Run();
  }
  sluice::server::LogInfo("connections closed; closing the store");
  if (cluster != nullptr) cluster->Stop();
  if (replication != nullptr) replication->Stop();
  state.saves().WaitForBackground();  // a BGSAVE still copying the store
  store.reset();                      // stops background work and syncs the write-ahead log
  sluice::server::LogInfo("Sluice is now ready to exit, bye bye...");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  sluice::server::InstallCrashHandler();  // a crash writes its report to the log (stderr)
  sluice::server::CommandTicksNow();      // INFO commandstats' clock: its origin is the start
  if (sluice::server::IsConvertDataDir(argc, argv)) {  // an offline step; serves nothing
    return sluice::server::ConvertDataDir(argc, argv, std::cout, std::cerr);
  }
  sluice::server::CommandLineResult result = sluice::server::ParseCommandLine(argc, argv);
  if (!result.parsed) {
    std::cerr << "sluice-server: " << result.error << "\n"
              << "Try 'sluice-server --help' for the options.\n";
    return 1;
  }
  if (result.parsed->show_help) {
    std::cout << sluice::server::UsageText("sluice-server");
    return 0;
  }
  if (result.parsed->show_version) {
    std::cout << "sluice-server " << SLUICE_VERSION << " (Redis protocol 7.0.15)\n";
    return 0;
  }
  return Serve(result.parsed->config, argv[0]);
}
