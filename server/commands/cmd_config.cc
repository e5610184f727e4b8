// CONFIG GET / SET / RESETSTAT / HELP over the option table in config.h, with Redis 7.0's
// replies: GET is a map (RESP3) or flat array (RESP2); SET is all-or-nothing.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "server/cluster/cluster.h"
#include "server/commands/server_commands.h"
#include "server/core/acl_user.h"
#include "server/core/args.h"
#include "server/core/client_state.h"
#include "server/core/command_latency.h"
#include "server/core/command_stats.h"
#include "server/core/config.h"
#include "server/core/config_compat.h"
#include "server/core/config_rewrite.h"
#include "server/core/errors.h"
#include "server/core/errors_introspection.h"
#include "server/core/listen_hook.h"
#include "server/core/logging.h"
#include "server/core/open_files.h"
#include "server/core/server_state.h"
#include "server/replication/replication.h"
#include "server/scripting/scripting_state.h"
#include "sluice/encoding_limits.h"
#include "sluice/glob.h"
#include "sluice/store.h"
#include "sluice/stream_nodes.h"

namespace sluice::server {

namespace {

bool HasGlobChars(std::string_view pattern) {
  return pattern.find_first_of("*?[") != std::string_view::npos;
}

// CONFIG GET pattern [pattern ...]. A pattern without glob characters is an exact (case-
// insensitive) name and is echoed as given, as Redis 7.0 does; glob matches reply with the
// table's names, an alias (slave-read-only, hash-max-ziplist-entries) as well as its option, and
// skip hidden parameters. Each name appears once: Sluice's options in table order, then Redis's.
void ConfigGet(CommandContext& ctx, Args args) {
  Config config = ctx.server.config();
  std::vector<std::pair<std::string, std::string>> found;
  auto add = [&](std::string_view shown, std::string value) {
    for (const auto& [name, v] : found) {
      if (EqualsIgnoreCase(name, shown)) return;
    }
    found.emplace_back(std::string(shown), std::move(value));
  };
  for (size_t i = 2; i < args.size(); ++i) {
    std::string_view pattern = args[i];
    if (!HasGlobChars(pattern)) {
      if (const ConfigOption* o = FindConfigOption(pattern)) {
        add(pattern, o->get(config));
      } else if (const CompatOption* c = FindCompatOption(pattern)) {
        add(pattern, GetCompatValue(config, *c));
      }
      continue;
    }
    for (const ConfigOption& o : ConfigOptions()) {
      if (GlobMatch(pattern, o.name, true)) add(o.name, o.get(config));
    }
    for (const CompatOption& c : CompatOptions()) {
      if (c.flags & CompatOption::kHidden) continue;
      if (GlobMatch(pattern, c.name, true)) add(c.name, GetCompatValue(config, c));
      if (c.alias != nullptr && GlobMatch(pattern, c.alias, true)) {
        add(c.alias, GetCompatValue(config, c));
      }
    }
  }
  ctx.out.Map(found.size());
  for (const auto& [name, value] : found) {
    ctx.out.Bulk(name);
    ctx.out.Bulk(value);
  }
}

// A stored-only parameter's value as a number (`fallback` when unset).
int64_t CompatInt(const Config& config, const char* name, int64_t fallback) {
  auto it = config.compat.find(name);
  return it == config.compat.end() ? fallback : std::strtoll(it->second.c_str(), nullptr, 10);
}

// Applies the Store-side effects of a new configuration: durability, value limit, cache size,
// expiry effort, the HyperLogLog sparse limit.
// Parser limits and the other values are read from ServerState by each connection.
void ApplyToStore(CommandContext& ctx, const Config& config) {
  ctx.store.set_durability(config.appendfsync);
  ctx.store.set_max_value_bytes(config.proto_max_bulk_len);
  ctx.store.set_block_cache_bytes(static_cast<size_t>(config.block_cache_size));
  ctx.store.set_active_expire_effort(static_cast<int>(config.active_expire_effort));
  ctx.store.set_hll_sparse_max_bytes(config.hll_sparse_max_bytes);
  SetStreamNodeLimits(CompatInt(config, "stream-node-max-bytes", 4096),
                      CompatInt(config, "stream-node-max-entries", 100));
  SetEncodingLimits(EncodingLimitsOf(config));
}

// An immutable option of Sluice's own (Redis has none of that name) set to the value it already
// has: nothing to change, so OK, and a tool that writes back CONFIG GET * (Redis's "CONFIG
// sanity" test) works. Redis's immutable options keep Redis's error whatever the value.
bool SameValueOfOwnImmutable(const ConfigOption& option, const Config& current,
                             std::string_view value) {
  // The immutable options Redis 7.0 has too; every other immutable option is Sluice's own (a
  // list of these, not of Sluice's, so that an option added later is covered).
  static constexpr std::string_view kRedis[] = {"dir", "aclfile", "enable-debug-command",
                                                "replicaof", "slaveof"};
  if (std::find(std::begin(kRedis), std::end(kRedis), option.name) != std::end(kRedis)) {
    return false;
  }
  Config probe = current;
  return !option.set(probe, value) && option.get(probe) == option.get(current);
}

// One parameter of a CONFIG SET: Sluice's option or Redis's stored-only parameter.
struct SetTarget {
  const ConfigOption* option = nullptr;
  const CompatOption* compat = nullptr;
  bool operator==(const SetTarget&) const = default;
};

// CONFIG SET name value [name value ...], validated completely before anything changes, with
// Redis 7.0's checks in its order: unknown names first, then immutable/protected ones and
// duplicates, then the values.
void ConfigSet(CommandContext& ctx, Args args) {
  if (args.size() % 2 != 0) return ReplyError(ctx.out, SyntaxError());
  std::vector<SetTarget> targets;
  for (size_t i = 2; i < args.size(); i += 2) {
    std::string_view name = args[i];
    SetTarget t{FindConfigOption(name), nullptr};
    if (t.option == nullptr) t.compat = FindCompatOption(name);
    if (t.option == nullptr && t.compat == nullptr) {
      return ReplyError(ctx.out, ConfigSetUnknown(name));
    }
    targets.push_back(t);
  }
  const Config current = ctx.server.config();
  bool protected_ok = false;
  if (const CompatOption* p = FindCompatOption("enable-protected-configs")) {
    protected_ok = GetCompatValue(current, *p) != "no";
  }
  for (size_t i = 2; i < args.size(); i += 2) {
    std::string_view name = args[i];
    const SetTarget& t = targets[(i - 2) / 2];
    bool is_protected = (t.compat != nullptr && (t.compat->flags & CompatOption::kProtected)) ||
                        (t.option != nullptr && EqualsIgnoreCase(t.option->name, "dir"));
    if (is_protected && !protected_ok) return ReplyError(ctx.out, ConfigSetProtected(name));
    if ((t.option != nullptr && !t.option->mutable_at_runtime &&
         !SameValueOfOwnImmutable(*t.option, current, args[i + 1])) ||
        (t.compat != nullptr && (t.compat->flags & CompatOption::kImmutable))) {
      return ReplyError(ctx.out, ConfigSetImmutable(name));
    }
    for (size_t j = 0; j < (i - 2) / 2; ++j) {
      if (targets[j] == t) {
        return ReplyError(ctx.out, ConfigSetFailed(name, "duplicate parameter"));
      }
    }
  }
  // One atomic read-modify-write: a CONFIG SET of another option on another connection can
  // neither be undone by this one nor reorder the Store's settings against CONFIG GET.
  Status failed = Status::Ok();
  bool tls_reloaded = false;  // the cluster bus rebuilds its TLS contexts too
  bool applied = ctx.server.UpdateConfig([&](Config& config) {
    const int64_t maxclients_before = config.maxclients;
    const int port_before = config.port;
    const std::vector<std::string> bind_before = config.bind;
    for (size_t i = 2; i < args.size(); i += 2) {
      const SetTarget& t = targets[(i - 2) / 2];
      std::optional<std::string> error = t.option != nullptr
                                             ? t.option->set(config, args[i + 1])
                                             : SetCompatValue(config, *t.compat, args[i + 1]);
      if (error) {
        std::string shown(args[i]);
        for (char& c : shown) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        failed = ConfigSetFailed(shown, *error);
        return false;
      }
    }
    if (config.maxclients > maxclients_before) {
      // As Redis: raise the open files limit to fit, or refuse with what would fit.
      int64_t fits = FitOpenFiles(config.maxclients).maxclients;
      if (fits < config.maxclients) {
        failed = ConfigSetFailed("maxclients", MaxclientsOverOsLimit(fits));
        return false;
      }
    }
    // tls-*: a file or context option builds a new TLS context (Redis's applyTlsCfg), named
    // by the first such option in the error when it cannot be built.
    const char* tls_option = nullptr;
    bool tls_reload = false;
    for (const SetTarget& target : targets) {
      const ConfigOption* option = target.option;
      if (option == nullptr) continue;  // Redis's stored-only parameters: no tls-* among them
      if (!EqualsIgnoreCase(std::string_view(option->name).substr(0, 4), "tls-")) continue;
      if (tls_option == nullptr) tls_option = option->name;
      if (IsTlsContextOption(option->name) && !tls_reload) {
        tls_reload = true;
        tls_option = option->name;
      }
    }
    if (tls_option != nullptr) {
      const TlsApplyResult tls = ctx.server.ApplyTls(config.tls, tls_reload);
      if (tls != TlsApplyResult::kOk) {
        const char* name = tls == TlsApplyResult::kListenFailed ? "tls-port" : tls_option;
        LogError(std::string("Failed applying new configuration. Possibly related to new ") + name +
                 " setting. Restoring previous settings.");
        failed = tls == TlsApplyResult::kListenFailed ? TlsListenFailed()
                                                      : TlsConfigureFailed(tls_option);
        return false;
      }
      tls_reloaded = tls_reload;
    }
    // port / bind: the listeners move now (Redis's changeListenPort / changeBindAddr); when
    // they cannot, the old ones stay and nothing of this CONFIG SET is kept.
    if (config.port != port_before || config.bind != bind_before) {
      const ListenApplyResult listen = ApplyListen(config.port, config.bind);
      if (listen != ListenApplyResult::kOk) {
        failed = listen == ListenApplyResult::kBindFailed ? BindFailed() : PortListenFailed();
        return false;
      }
    }
    ApplyToStore(ctx, config);
    return true;
  });
  if (!applied) return ReplyError(ctx.out, failed);
  if (replication::Replication* repl = replication::Instance()) repl->ReloadConfig();
  if (tls_reloaded) {
    if (cluster::Cluster* c = cluster::Instance()) c->ReloadTls(ctx.server.config().tls);
  }
  if (cluster::Cluster* c = cluster::Instance()) c->ApplySettings();  // cluster-* at once
  ctx.out.Simple("OK");
}

// CONFIG REWRITE: the running configuration into the file the server started with.
void ConfigRewriteCommand(CommandContext& ctx, Args) {
  Config config = ctx.server.config();
  if (config.config_file.empty()) return ReplyError(ctx.out, NoConfigFile());
  // As Redis's rewriteConfigUserOption: with an aclfile the file's `user` lines go (the users
  // live in the aclfile); without one every user is written as a `user` line.
  std::vector<std::string> user_lines;
  if (config.aclfile.empty()) {
    for (const auto& user : ctx.server.acl().Users()) {
      user_lines.push_back("user " + user->name + " " +
                           DescribeAclUser(*user, ctx.server.commands()));
    }
  }
  AddConfigRewriteHook("user", [user_lines](const Config&, ConfigRewrite& rewrite) {
    if (user_lines.empty()) return rewrite.MarkProcessed("user");
    rewrite.Rewrite("user", user_lines, /*force=*/true);
  });
  std::string error = RewriteConfigFile(config);
  if (!error.empty()) {
    LogError("CONFIG REWRITE failed: " + error);
    return ReplyError(ctx.out, ConfigRewriteFailed(error));
  }
  LogInfo("CONFIG REWRITE executed with success.");
  ctx.out.Simple("OK");
}

void ConfigResetStat(CommandContext& ctx, Args) {
  ctx.server.stats().Reset();
  ctx.server.limiter_stats().Reset();
  ctx.server.scripting().native_stats.Reset();
  ResetCommandStats();
  ResetCommandLatencies();
  ctx.out.Simple("OK");
}

void ConfigHelp(CommandContext& ctx, Args) {
  static constexpr const char* kLines[] = {
      "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "GET <pattern>",
      "    Return parameters matching the glob-like <pattern> and their values.",
      "SET <directive> <value>",
      "    Set the configuration <directive> to <value>.",
      "RESETSTAT",
      "    Reset statistics reported by the INFO command.",
      "REWRITE",
      "    Rewrite the configuration file.",
      "HELP",
      "    Prints this help.",
  };
  ctx.out.Array(std::size(kLines));
  for (const char* line : kLines) ctx.out.Simple(line);
}

}  // namespace

void RegisterConfigCommands(CommandTable& table) {
  constexpr uint32_t kFlags = kAdmin | kNoScript | kLoading | kStale;
  table.Add(ServerSpec("config", -2, 0, nullptr, "A container for server configuration commands.",
                       "2.0.0", "subcommand"));
  table.Add(ServerSpec("config|get", -3, kFlags, ConfigGet,
                       "Returns the effective values of configuration parameters.", "2.0.0",
                       "parameter [parameter ...]"));
  table.Add(ServerSpec("config|set", -4, kFlags, ConfigSet,
                       "Sets configuration parameters in-flight.", "2.0.0",
                       "parameter value [parameter value ...]"));
  table.Add(ServerSpec("config|resetstat", 2, kFlags, ConfigResetStat,
                       "Resets the server's statistics.", "2.0.0", ""));
  RegisterReplicaofRewrite();
  table.Add(ServerSpec("config|rewrite", 2, kFlags, ConfigRewriteCommand,
                       "Persists the effective configuration to file.", "2.8.0", ""));
  table.Add(ServerSpec("config|help", 2, kLoading | kStale, ConfigHelp,
                       "Returns helpful text about the different subcommands.", "5.0.0", ""));
}

}  // namespace sluice::server
