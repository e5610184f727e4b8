// CONFIG GET / SET / RESETSTAT / HELP over the option table in config.h, with Redis 7.0's
// replies: GET is a map (RESP3) or flat array (RESP2); SET is all-or-nothing.
#include <string>
#include <utility>
#include <vector>

#include "server/commands/server_commands.h"
#include "server/core/args.h"
#include "server/core/client_state.h"
#include "server/core/config.h"
#include "server/core/errors.h"
#include "server/core/open_files.h"
#include "server/core/server_state.h"
#include "server/replication/replication.h"
#include "server/scripting/scripting_state.h"
#include "sluice/glob.h"
#include "sluice/store.h"

namespace sluice::server {

namespace {

bool HasGlobChars(std::string_view pattern) {
  return pattern.find_first_of("*?[") != std::string_view::npos;
}

// CONFIG GET pattern [pattern ...]. A pattern without glob characters is an exact (case-
// insensitive) name and is echoed as given, as Redis 7.0 does; glob matches reply with the
// canonical names. Each option appears once, in table order.
void ConfigGet(CommandContext& ctx, Args args) {
  Config config = ctx.server.config();
  std::vector<std::pair<std::string, std::string>> found;
  std::vector<std::string> seen;
  auto add = [&](std::string_view shown, const char* canonical, std::string value) {
    for (const std::string& s : seen) {
      if (s == canonical) return;
    }
    seen.emplace_back(canonical);
    found.emplace_back(std::string(shown), std::move(value));
  };
  for (size_t i = 2; i < args.size(); ++i) {
    std::string_view pattern = args[i];
    bool glob = HasGlobChars(pattern);
    for (const ConfigOption& o : ConfigOptions()) {
      if (glob ? GlobMatch(pattern, o.name, true) : EqualsIgnoreCase(pattern, o.name)) {
        add(glob ? std::string_view(o.name) : pattern, o.name, o.get(config));
      }
    }
    for (const auto& [name, value] : CompatConfigValues()) {
      if (glob ? GlobMatch(pattern, name, true) : EqualsIgnoreCase(pattern, name)) {
        add(glob ? std::string_view(name) : pattern, name, value);
      }
    }
  }
  ctx.out.Map(found.size());
  for (const auto& [name, value] : found) {
    ctx.out.Bulk(name);
    ctx.out.Bulk(value);
  }
}

// Known to CONFIG GET but not settable: Sluice's read-only options and the Redis options it
// only reports.
bool IsCompatName(std::string_view name) {
  for (const auto& [compat, value] : CompatConfigValues()) {
    if (EqualsIgnoreCase(name, compat)) return true;
  }
  return false;
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
}

// CONFIG SET name value [name value ...], validated completely before anything changes.
void ConfigSet(CommandContext& ctx, Args args) {
  if (args.size() % 2 != 0) return ReplyError(ctx.out, SyntaxError());
  std::vector<const ConfigOption*> options;
  for (size_t i = 2; i < args.size(); i += 2) {
    std::string_view name = args[i];
    const ConfigOption* option = FindConfigOption(name);
    if (option == nullptr && !IsCompatName(name)) {
      return ReplyError(ctx.out, ConfigSetUnknown(name));
    }
    if (option == nullptr || !option->mutable_at_runtime) {
      return ReplyError(ctx.out, ConfigSetImmutable(name));
    }
    for (const ConfigOption* earlier : options) {
      if (earlier == option)
        return ReplyError(ctx.out, ConfigSetFailed(name, "duplicate parameter"));
    }
    options.push_back(option);
  }
  // One atomic read-modify-write: a CONFIG SET of another option on another connection can
  // neither be undone by this one nor reorder the Store's settings against CONFIG GET.
  Status failed = Status::Ok();
  bool applied = ctx.server.UpdateConfig([&](Config& config) {
    const int64_t maxclients_before = config.maxclients;
    for (size_t i = 2; i < args.size(); i += 2) {
      const ConfigOption* option = options[(i - 2) / 2];
      if (std::optional<std::string> error = option->set(config, args[i + 1])) {
        failed = ConfigSetFailed(args[i], *error);
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
    ApplyToStore(ctx, config);
    return true;
  });
  if (!applied) return ReplyError(ctx.out, failed);
  if (replication::Replication* repl = replication::Instance()) repl->ReloadConfig();
  ctx.out.Simple("OK");
}

void ConfigResetStat(CommandContext& ctx, Args) {
  ctx.server.stats().Reset();
  ctx.server.limiter_stats().Reset();
  ctx.server.scripting().native_stats.Reset();
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
  table.Add(ServerSpec("config|help", 2, kLoading | kStale, ConfigHelp,
                       "Returns helpful text about the different subcommands.", "5.0.0", ""));
  table.Add(ServerSpec("config|rewrite", 2, kFlags, ConfigRewrite,
                       "Persists the effective configuration to file.", "2.8.0", ""));
}

}  // namespace sluice::server
