// Functions: FUNCTION LOAD / LIST / DELETE / FLUSH / DUMP / RESTORE / STATS / KILL / HELP, FCALL
// and FCALL_RO, with Redis 7.0's replies and errors. The libraries live in the server's
// FunctionRegistry (persisted in the data directory); each I/O thread runs them in its own Lua
// state, refilled from the registry when it changed. FCALL runs in one unit of work exactly as
// EVAL does (cmd_scripting.cc): declared keys locked, reads isolated, one RocksDB write.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/commands/commands.h"
#include "server/commands/script_args.h"
#include "server/core/args.h"
#include "server/core/client_state.h"
#include "server/core/cluster_route.h"
#include "server/core/errors.h"
#include "server/core/replication_hook.h"
#include "server/core/server_state.h"
#include "server/replication/replication.h"
#include "server/scripting/lua_functions.h"
#include "server/scripting/lua_vm.h"
#include "server/scripting/scripting_state.h"
#include "sluice/glob.h"

namespace sluice::server {

namespace {

void FcallKeys(Args args, std::vector<int>* positions) {
  auto n = ParseInt64(args[2]);
  if (!n || *n < 0 || *n > static_cast<int64_t>(args.size()) - 3) return;
  for (int64_t i = 0; i < *n; ++i) positions->push_back(static_cast<int>(3 + i));
}

// This thread's functions state, holding the registry's current libraries.
LuaVm& FunctionsVm(FunctionRegistry& registry) {
  LuaVm* vm = &LuaVm::ForThread(LuaVm::Kind::kFunctions, registry.generation());
  if (vm->prepared) return *vm;
  std::vector<std::string> codes;
  const uint64_t generation = registry.Snapshot(&codes);
  vm = &LuaVm::ForThread(LuaVm::Kind::kFunctions, generation);
  if (vm->prepared) return *vm;
  for (const std::string& code : codes) {
    Library lib;
    LoadLibraryInto(*vm, code, &lib);  // validated when it was loaded
  }
  vm->prepared = true;
  return *vm;
}

// Routing's view of an FCALL-family call (Redis's fcallGetCommandFlags): a function writes
// unless it declares no-writes; nullopt (the command's flags decide) for an unknown one.
std::optional<bool> FcallWritesForRouting(CommandContext& ctx, const CommandSpec&, Args args) {
  LuaVm& vm = FunctionsVm(ctx.server.scripting().functions);
  const bool no_writes = PushFunction(vm, args[1]);
  if (!vm.HasValueOnTop()) return std::nullopt;
  vm.Pop();
  return !no_writes;
}

void FcallGeneric(CommandContext& ctx, Args args, bool read_only) {
  LuaVm& vm = FunctionsVm(ctx.server.scripting().functions);
  ctx.txn();  // the unit the Dispatcher planned (or EXEC's)
  bool no_cluster = false;
  std::string name;
  const bool no_writes = PushFunction(vm, args[1], &no_cluster, &name);
  if (!vm.HasValueOnTop()) return ReplyError(ctx.out, FunctionNotFound());
  size_t n = 0;  // checked after the function is found, as Redis does
  if (Status s = ParseScriptNumKeys(args, FcallBadNumKeys(), &n); !s.ok()) {
    vm.Pop();
    return ReplyError(ctx.out, s);
  }
  if (no_cluster && ctx.server.cluster() != nullptr) {
    vm.Pop();
    return ReplyError(ctx.out, ScriptNoClusterFlag());
  }
  if (read_only && !no_writes) {
    vm.Pop();
    return ReplyError(ctx.out, ScriptRoWithWrites());
  }
  if (!no_writes) {  // a function that may write is refused up front where writes are
    if (Status s = AdmitScriptWrite(ctx); !s.ok()) {
      vm.Pop();
      return ReplyError(ctx.out, s);
    }
  }
  ScriptExecution exec;
  exec.ctx = &ctx;
  exec.name = std::move(name);  // as registered (errors say "script: test" for FCALL TEST)
  exec.command = args;
  exec.read_only = read_only || no_writes;
  exec.running.is_function = true;
  vm.PushArgs(args.subspan(3, n));
  vm.PushArgs(args.subspan(3 + n));
  const int db_before = ctx.client.db;
  vm.CallTop(2, exec, ctx.out);
  ctx.client.db = db_before;
}

void Fcall(CommandContext& ctx, Args args) { FcallGeneric(ctx, args, false); }
void FcallRo(CommandContext& ctx, Args args) { FcallGeneric(ctx, args, true); }

// The libraries changed: the command reaches the replicas as given (docs/replication.md).
void Propagate(Args args) {
  if (replication::Replication* r = replication::Instance(); r != nullptr)
    r->PropagateAsGiven(args);
}

void FunctionLoad(CommandContext& ctx, Args args) {
  bool replace = false;
  if (args.size() == 4) {
    if (!EqualsIgnoreCase(args[2], "replace"))
      return ReplyError(ctx.out, UnknownOptionGiven(args[2]));
    replace = true;
  } else if (args.size() > 4) {
    return ReplyError(ctx.out, UnknownOptionGiven(args[2]));
  }
  std::string name;
  if (Status s = ctx.server.scripting().functions.Load(args.back(), replace, &name); !s.ok()) {
    return ReplyError(ctx.out, s);
  }
  Propagate(args);
  ctx.out.Bulk(name);
}

void FunctionDelete(CommandContext& ctx, Args args) {
  if (Status s = ctx.server.scripting().functions.Delete(args[2]); !s.ok())
    return ReplyError(ctx.out, s);
  Propagate(args);
  ctx.out.Simple("OK");
}

void FunctionFlush(CommandContext& ctx, Args args) {
  if (args.size() > 3) return ReplyError(ctx.out, SubcommandSyntax("function", args[1]));
  if (args.size() == 3 && !EqualsIgnoreCase(args[2], "sync") &&
      !EqualsIgnoreCase(args[2], "async")) {
    return ReplyError(ctx.out, FunctionFlushOption());
  }
  if (Status s = ctx.server.scripting().functions.Flush(); !s.ok()) return ReplyError(ctx.out, s);
  Propagate(args);
  ctx.out.Simple("OK");
}

void WriteLibrary(protocol::ReplyWriter& out, const Library& lib, bool with_code) {
  out.Map(with_code ? 4 : 3);
  out.Bulk("library_name");
  out.Bulk(lib.name);
  out.Bulk("engine");
  out.Bulk("LUA");
  out.Bulk("functions");
  out.Array(lib.functions.size());
  for (const FunctionInfo& fn : lib.functions) {
    out.Map(3);
    out.Bulk("name");
    out.Bulk(fn.name);
    out.Bulk("description");
    if (fn.description) {
      out.Bulk(*fn.description);
    } else {
      out.NullBulk();
    }
    out.Bulk("flags");
    out.Set(fn.flags.size());
    for (const std::string& flag : fn.flags) out.Simple(flag);
  }
  if (with_code) {
    out.Bulk("library_code");
    out.Bulk(lib.code);
  }
}

void FunctionList(CommandContext& ctx, Args args) {
  bool with_code = false;
  std::optional<std::string_view> pattern;
  for (size_t i = 2; i < args.size(); ++i) {
    if (EqualsIgnoreCase(args[i], "withcode") && !with_code) {
      with_code = true;
    } else if (EqualsIgnoreCase(args[i], "libraryname") && !pattern) {
      if (i + 1 >= args.size()) return ReplyError(ctx.out, LibraryNameArgMissing());
      pattern = args[++i];
    } else {
      return ReplyError(ctx.out, UnknownArgument(args[i]));
    }
  }
  std::vector<Library> libs = ctx.server.scripting().functions.List();
  std::vector<const Library*> shown;
  for (const Library& lib : libs) {
    if (!pattern || GlobMatch(*pattern, lib.name)) shown.push_back(&lib);
  }
  ctx.out.Array(shown.size());
  for (const Library* lib : shown) WriteLibrary(ctx.out, *lib, with_code);
}

void FunctionDump(CommandContext& ctx, Args) {
  ctx.out.Bulk(ctx.server.scripting().functions.Dump());
}

void FunctionRestore(CommandContext& ctx, Args args) {
  auto policy = FunctionRegistry::RestorePolicy::kAppend;
  if (args.size() == 4) {
    if (EqualsIgnoreCase(args[3], "flush")) {
      policy = FunctionRegistry::RestorePolicy::kFlush;
    } else if (EqualsIgnoreCase(args[3], "replace")) {
      policy = FunctionRegistry::RestorePolicy::kReplace;
    } else if (!EqualsIgnoreCase(args[3], "append")) {
      return ReplyError(ctx.out, BadRestorePolicy());
    }
  } else if (args.size() > 4) {
    return ReplyError(ctx.out, SubcommandSyntax("function", args[1]));
  }
  if (Status s = ctx.server.scripting().functions.Restore(args[2], policy); !s.ok()) {
    return ReplyError(ctx.out, s);
  }
  // The payload is Sluice's own format: replicas (a redis-server too) get the libraries it left,
  // as FUNCTION FLUSH and a FUNCTION LOAD each, in MULTI/EXEC.
  if (replication::Replication* r = replication::Instance(); r != nullptr) {
    std::vector<std::vector<std::string>> commands = {{"FUNCTION", "FLUSH"}};
    std::vector<std::string> codes;
    ctx.server.scripting().functions.Snapshot(&codes);
    for (std::string& code : codes) commands.push_back({"FUNCTION", "LOAD", std::move(code)});
    r->PropagateCommands(commands);
  }
  ctx.out.Simple("OK");
}

void FunctionStats(CommandContext& ctx, Args) {
  FunctionRegistry& registry = ctx.server.scripting().functions;
  ctx.out.Map(2);
  ctx.out.Bulk("running_script");
  // The busy script (past busy-reply-threshold) that started first: Sluice runs scripts on
  // every I/O thread at once, and only a busy one can be seen from another client, as on Redis.
  const auto running = ctx.server.running_scripts().Longest(RunningScripts::SteadyNowMs());
  if (!running) {
    ctx.out.NullBulk();
  } else {
    ctx.out.Map(3);
    ctx.out.Bulk("name");
    ctx.out.Bulk(running->name);
    ctx.out.Bulk("command");
    ctx.out.Array(running->command.size());
    for (const std::string& arg : running->command) ctx.out.Bulk(arg);
    ctx.out.Bulk("duration_ms");
    ctx.out.Integer(running->duration_ms);
  }
  ctx.out.Bulk("engines");
  ctx.out.Map(1);
  ctx.out.Bulk("LUA");
  ctx.out.Map(2);
  ctx.out.Bulk("libraries_count");
  ctx.out.Integer(static_cast<int64_t>(registry.library_count()));
  ctx.out.Bulk("functions_count");
  ctx.out.Integer(static_cast<int64_t>(registry.function_count()));
}

void FunctionKill(CommandContext& ctx, Args) { KillRunningScript(ctx, /*functions=*/true); }

void FunctionHelp(CommandContext& ctx, Args) {
  static constexpr const char* kLines[] = {
      "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "LOAD [REPLACE] <FUNCTION CODE>",
      "    Create a new library with the given library name and code.",
      "DELETE <LIBRARY NAME>",
      "    Delete the given library.",
      "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
      "    Return general information on all the libraries:",
      "    * Library name",
      "    * The engine used to run the Library",
      "    * Library description",
      "    * Functions list",
      "    * Library code (if WITHCODE is given)",
      "    It also possible to get only function that matches a pattern using LIBRARYNAME "
      "argument.",
      "STATS",
      "    Return information about the current function running:",
      "    * Function name",
      "    * Command used to run the function",
      "    * Duration in MS that the function is running",
      "    If no function is running, return nil",
      "    In addition, returns a list of available engines.",
      "KILL",
      "    Kill the current running function.",
      "FLUSH [ASYNC|SYNC]",
      "    Delete all the libraries.",
      "    When called without the optional mode argument, the behavior is determined by the",
      "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
      "    * ASYNC: Asynchronously flush the libraries.",
      "    * SYNC: Synchronously flush the libraries.",
      "DUMP",
      "    Return a serialized payload representing the current libraries, can be restored "
      "using FUNCTION RESTORE command",
      "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
      "    Restore the libraries represented by the given payload, it is possible to give a "
      "restore policy to",
      "    control how to handle existing libraries (default APPEND):",
      "    * FLUSH: delete all existing libraries.",
      "    * APPEND: appends the restored libraries to the existing libraries. On collision, "
      "abort.",
      "    * REPLACE: appends the restored libraries to the existing libraries, On collision, "
      "replace the old",
      "      libraries with the new libraries (notice that even on this option there is a "
      "chance of failure",
      "      in case of functions name collision with another library).",
      "HELP",
      "    Prints this help.",
  };
  ctx.out.Array(std::size(kLines));
  for (const char* line : kLines) ctx.out.Simple(line);
}

void Add(CommandTable& table, std::string name, int arity, uint32_t flags, Handler handler,
         KeyFinder keys, std::string summary, std::string since, std::string hint) {
  CommandSpec spec = MakeSpec("scripting", std::move(name), arity, flags, {}, handler,
                              std::move(summary), std::move(since), std::move(hint));
  spec.find_keys = keys;
  table.Add(std::move(spec));
}

}  // namespace

void RegisterFunctionCommands(CommandTable& table) {
  constexpr uint32_t kFcallFlags =
      kNoScript | kStale | kScriptUnit | kSkipMonitor | kNoMandatoryKeys;
  SetScriptWritesCheck(/*functions=*/true, FcallWritesForRouting);
  Add(table, "fcall", -3, kFcallFlags, Fcall, FcallKeys, "Invokes a function.", "7.0.0",
      "function numkeys [key [key ...]] [arg [arg ...]]");
  Add(table, "fcall_ro", -3, kFcallFlags | kReadOnly, FcallRo, FcallKeys,
      "Invokes a read-only function.", "7.0.0", "function numkeys [key [key ...]] [arg [arg ...]]");
  Add(table, "function", -2, 0, nullptr, nullptr, "A container for function commands.", "7.0.0",
      "subcommand");
  Add(table, "function|load", -3, kNoScript | kDenyOom | kWritesLibraries, FunctionLoad, nullptr,
      "Creates a library.", "7.0.0", "[REPLACE] function-code");
  Add(table, "function|delete", 3, kNoScript | kWritesLibraries, FunctionDelete, nullptr,
      "Deletes a library and its functions.", "7.0.0", "library-name");
  Add(table, "function|flush", -2, kNoScript | kWritesLibraries, FunctionFlush, nullptr,
      "Deletes all libraries and functions.", "7.0.0", "[ASYNC|SYNC]");
  Add(table, "function|list", -2, kNoScript, FunctionList, nullptr,
      "Returns information about all libraries.", "7.0.0",
      "[LIBRARYNAME library-name-pattern] [WITHCODE]");
  Add(table, "function|dump", 2, kNoScript, FunctionDump, nullptr,
      "Dumps all libraries into a serialized binary payload.", "7.0.0", "");
  Add(table, "function|restore", -3, kNoScript | kDenyOom | kWritesLibraries, FunctionRestore,
      nullptr, "Restores all libraries from a payload.", "7.0.0",
      "serialized-value [FLUSH|APPEND|REPLACE]");
  Add(table, "function|stats", 2, kNoScript | kAllowBusy, FunctionStats, nullptr,
      "Returns information about a function during execution.", "7.0.0", "");
  Add(table, "function|kill", 2, kNoScript | kAllowBusy, FunctionKill, nullptr,
      "Terminates a function during execution.", "7.0.0", "");
  Add(table, "function|help", 2, kLoading | kStale, FunctionHelp, nullptr,
      "Returns helpful text about the different subcommands.", "7.0.0", "");
}

}  // namespace sluice::server
