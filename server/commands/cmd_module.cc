// MODULE LIST | HELP | LOAD | LOADEX | UNLOAD, and OBJECT HELP. Sluice loads no Redis modules
// (their API is Redis's own memory and event loop): LIST is always empty, and LOAD fails as a
// module that cannot be loaded fails on Redis, once `enable-module-command` lets it be tried
// (default "no": Redis's refusal). Monitoring tools call MODULE LIST to learn what a server has.
#include <string>
#include <string_view>

#include "server/commands/commands.h"
#include "server/core/client_state.h"
#include "server/core/config_compat.h"
#include "server/core/errors.h"
#include "server/core/logging.h"
#include "server/core/server_state.h"

namespace sluice::server {

namespace {

void Lines(CommandContext& ctx, std::initializer_list<const char*> lines) {
  ctx.out.Array(lines.size());
  for (const char* line : lines) ctx.out.Simple(line);
}

void ModuleHelp(CommandContext& ctx, Args) {
  Lines(ctx, {"MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:", "LIST",
              "    Return a list of loaded modules.", "LOAD <path> [<arg> ...]",
              "    Load a module library from <path>, passing to it any optional arguments.",
              "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
              "    Load a module library from <path>, while passing it module configurations "
              "and optional arguments.",
              "UNLOAD <name>", "    Unload a module.", "HELP", "    Prints this help."});
}

void ObjectHelp(CommandContext& ctx, Args) {
  Lines(ctx, {"OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:", "ENCODING <key>",
              "    Return the kind of internal representation used in order to store the value",
              "    associated with a <key>.", "FREQ <key>",
              "    Return the access frequency index of the <key>. The returned integer is",
              "    proportional to the logarithm of the recent access frequency of the key.",
              "IDLETIME <key>",
              "    Return the idle time of the <key>, that is the approximated number of",
              "    seconds elapsed since the last access to the key.", "REFCOUNT <key>",
              "    Return the number of references of the value associated with the specified",
              "    <key>.", "HELP", "    Prints this help."});
}

void ModuleList(CommandContext& ctx, Args) { ctx.out.Array(0); }

// A peer on the loopback interface (Redis's islocalClient; Sluice listens on TCP only).
bool IsLocalClient(const ClientState& client) {
  const std::string_view a = client.addr;
  return a.starts_with("127.") || a.starts_with("[::1]:");
}

// enable-module-command: "yes", "local" (loopback clients) or "no".
bool ModuleCommandAllowed(CommandContext& ctx) {
  const CompatOption* option = FindCompatOption("enable-module-command");
  if (option == nullptr) return false;
  const std::string mode = GetCompatValue(ctx.server.config(), *option);
  return mode == "yes" || (mode == "local" && IsLocalClient(ctx.client));
}

void ModuleLoad(CommandContext& ctx, Args args) {
  if (!ModuleCommandAllowed(ctx)) return ReplyError(ctx.out, ModuleCommandNotAllowed());
  LogError("Module " + std::string(args[2]) +
           " failed to load: Sluice does not load Redis modules (docs/server.md, MODULE)");
  ReplyError(ctx.out, ModuleLoadFailed());
}

void ModuleUnload(CommandContext& ctx, Args) {
  if (!ModuleCommandAllowed(ctx)) return ReplyError(ctx.out, ModuleCommandNotAllowed());
  ReplyError(ctx.out, ModuleUnloadNoSuchModule());
}

}  // namespace

void RegisterModuleCommands(CommandTable& table) {
  constexpr uint32_t kLoad = kAdmin | kNoScript | kNoAsyncLoading;
  auto add = [&](const char* name, int arity, uint32_t flags, Handler h, const char* summary,
                 const char* since, const char* hint) {
    table.Add(MakeSpec("server", name, arity, flags, {}, h, summary, since, hint));
  };
  add("module", -2, 0, nullptr, "A container for module commands", "4.0.0", "subcommand");
  add("module|help", 2, kLoading | kStale, ModuleHelp,
      "Show helpful text about the different subcommands", "5.0.0", "");
  add("module|list", 2, kAdmin | kNoScript, ModuleList, "List all modules loaded by the server",
      "4.0.0", "");
  add("module|load", -3, kLoad, ModuleLoad, "Load a module", "4.0.0", "path [arg [arg ...]]");
  add("module|loadex", -3, kLoad, ModuleLoad, "Load a module with extended parameters", "7.0.0",
      "path [CONFIG name value [CONFIG name value ...]] [ARGS args [args ...]]");
  add("module|unload", 3, kLoad, ModuleUnload, "Unload a module", "4.0.0", "name");
  table.Add(MakeSpec("generic", "object|help", 2, kLoading | kStale, {}, ObjectHelp,
                     "Show helpful text about the different subcommands", "6.2.0", ""));
}

}  // namespace sluice::server
