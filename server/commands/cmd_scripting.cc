// Scripting: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT LOAD / EXISTS / FLUSH / KILL / HELP,
// with Redis 7.0's replies and errors. A script runs in ONE unit of work (kScriptUnit): the
// Dispatcher locks the keys it declares, its reads lock what they touch, and its writes commit
// as one RocksDB write after it returns. A redis.call on an undeclared key whose stripe another
// unit holds stops the script; the Dispatcher drops its effects and reply and runs it again
// holding every stripe (docs/scripting.md). Inside MULTI, EVAL is queued and runs in the EXEC's
// unit.
#include <algorithm>
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
#include "server/scripting/lua_sha1.h"
#include "server/scripting/lua_vm.h"
#include "server/scripting/native/native_scripts.h"
#include "server/scripting/scripting_state.h"

namespace sluice::server {

namespace {

// What a "#!lua flags=..." first line declares.
struct ScriptFlags {
  bool shebang = false;
  bool no_writes = false;
  bool no_cluster = false;        // refused in cluster mode
  bool allow_cross_slot = false;  // its commands may touch keys of several slots
};

// What a thread keeps with each script it compiled (LuaVm's tag): its shebang flags and its
// index in the native-scripts registry (-1: not recognised), so a call by SHA1 needs neither
// the shared cache, nor the body, nor a registry lookup.
struct ScriptTag {
  ScriptFlags flags;
  int native = -1;

  uint32_t ToBits() const {
    return (flags.shebang ? 1u : 0u) | (flags.no_writes ? 2u : 0u) | (flags.no_cluster ? 4u : 0u) |
           (flags.allow_cross_slot ? 8u : 0u) | (static_cast<uint32_t>(native + 1) << 8);
  }
  static ScriptTag FromBits(uint32_t bits) {
    return ScriptTag{.flags = {.shebang = (bits & 1u) != 0,
                               .no_writes = (bits & 2u) != 0,
                               .no_cluster = (bits & 4u) != 0,
                               .allow_cross_slot = (bits & 8u) != 0},
                     .native = static_cast<int>(bits >> 8) - 1};
  }
};

// Parses the shebang of `body`, if any, and gives the text to compile: the shebang line emptied
// (its newline kept, so line numbers stay those of the body).
Status ParseShebang(std::string_view body, ScriptFlags* flags, std::string_view* code,
                    std::string* storage) {
  *code = body;
  if (body.substr(0, 2) != "#!") return Status::Ok();
  flags->shebang = true;
  const size_t eol = body.find('\n');
  const std::string_view line = body.substr(0, eol);
  std::vector<std::string_view> parts;
  for (size_t i = 0; i < line.size();) {
    const size_t sp = line.find_first_of(" \t\r", i);
    const size_t end = sp == std::string_view::npos ? line.size() : sp;
    if (end > i) parts.push_back(line.substr(i, end - i));
    i = end + 1;
  }
  if (parts.empty() || parts[0] != "#!lua") {
    return ShebangEngine(parts.empty() ? line : parts[0]);
  }
  for (size_t j = 1; j < parts.size(); ++j) {
    if (parts[j].substr(0, 6) != "flags=") return ShebangOption(parts[j]);
    std::string_view list = parts[j].substr(6);
    while (!list.empty()) {
      const size_t comma = list.find(',');
      const std::string_view flag = list.substr(0, comma);
      if (flag == "no-writes") {
        flags->no_writes = true;
      } else if (flag == "no-cluster") {
        flags->no_cluster = true;
      } else if (flag == "allow-cross-slot-keys") {
        flags->allow_cross_slot = true;
      } else if (flag != "allow-oom" && flag != "allow-stale") {
        return ShebangFlag(flag);
      }
      if (comma == std::string_view::npos) break;
      list.remove_prefix(comma + 1);
    }
  }
  if (eol == std::string_view::npos) {
    *code = {};
  } else {
    storage->assign(body.substr(eol));
    *code = *storage;
  }
  return Status::Ok();
}

// EVAL's key positions: the numkeys arguments after numkeys (none when numkeys is bad).
void EvalKeys(Args args, std::vector<int>* positions) {
  auto n = ParseInt64(args[2]);
  if (!n || *n < 0 || *n > static_cast<int64_t>(args.size()) - 3) return;
  for (int64_t i = 0; i < *n; ++i) positions->push_back(static_cast<int>(3 + i));
}

// The script's name in the caches (lower-case SHA1 hex) into *buf: EVAL's body hashed, or
// EVALSHA's argument in lower case. An argument that is not 40 characters long is returned as
// it is: no cache holds it (NOSCRIPT).
std::string_view ScriptSha(std::string_view arg, bool by_sha, char (&buf)[kSha1HexLength]) {
  if (!by_sha) {
    Sha1HexMemoTo(arg, buf);
    return std::string_view(buf, kSha1HexLength);
  }
  if (arg.size() != kSha1HexLength) return arg;
  size_t i = 0;
  while (i < kSha1HexLength && !(arg[i] >= 'A' && arg[i] <= 'Z')) ++i;
  if (i == kSha1HexLength) return arg;  // lower case already, as clients send it
  std::copy(arg.begin(), arg.end(), buf);
  for (; i < kSha1HexLength; ++i) {
    if (buf[i] >= 'A' && buf[i] <= 'Z') buf[i] = static_cast<char>(buf[i] - 'A' + 'a');
  }
  return std::string_view(buf, kSha1HexLength);
}

// EVAL's checks of numkeys (script_args.h).
Status ParseNumKeys(Args args, size_t* n) { return ParseScriptNumKeys(args, NotAnInteger(), n); }

// The DataCallCheck of the EVAL family (command.h): a recognised library script that this
// thread has compiled (so it is cached) and whose op keeps to its declared keys runs as a plain
// data command; data_call_arg is its registry index. Anything else (the first call on a thread,
// no keys, native-scripts no, EVAL_RO of a writing body) runs in a script unit, as before.
bool NativeDataCall(CommandContext& ctx, Args args, bool by_sha, bool read_only) {
  if (!ctx.server.native_scripts_enabled()) return false;
  size_t n = 0;
  if (!ParseNumKeys(args, &n).ok() || n == 0) return false;
  // EVAL hashes its body once more in the handler when this says no: only for bodies that have
  // a recognised one's length.
  if (by_sha ? args[1].size() != kSha1HexLength : !MayBeNativeScriptBody(args[1].size())) {
    return false;
  }
  LuaVm& vm = LuaVm::ForThread(LuaVm::Kind::kEval, ctx.server.scripting().scripts.generation());
  char buf[kSha1HexLength];
  const std::optional<uint32_t> bits = vm.Tag(ScriptSha(args[1], by_sha, buf));
  if (!bits) return false;
  const ScriptTag tag = ScriptTag::FromBits(*bits);
  if (tag.flags.shebang || !NativeScriptRunsAsDataCall(ctx, tag.native, read_only)) return false;
  ctx.data_call_arg = tag.native;
  return true;
}

void EvalGeneric(CommandContext& ctx, Args args, bool by_sha, bool read_only) {
  // Redis's evalShaCommand: a SHA1 of the wrong length matches nothing, whatever numkeys says.
  if (by_sha && args[1].size() != kSha1HexLength) return ReplyError(ctx.out, NoScript());
  size_t n = 0;
  if (Status s = ParseNumKeys(args, &n); !s.ok()) return ReplyError(ctx.out, s);
  const Args keys = args.subspan(3, n);
  const Args argv = args.subspan(3 + n);
  if (ctx.data_call) {
    // NativeDataCall found the script: its op runs in this plain unit, or the call goes back
    // to the Dispatcher for a script unit (the body then runs in Lua there).
    if (!TryRunNativeScript(ctx, ctx.data_call_arg, keys, argv, read_only)) {
      ctx.needs_script_unit = true;
    }
    return;
  }
  ScriptCache& cache = ctx.server.scripting().scripts;
  LuaVm& vm = LuaVm::ForThread(LuaVm::Kind::kEval, cache.generation());
  char sha_buf[kSha1HexLength];
  const std::string_view sha = ScriptSha(args[1], by_sha, sha_buf);
  ScriptTag tag;
  // A script this thread compiled under the cache's current generation is still cached (only
  // SCRIPT FLUSH removes scripts, and it changes the generation): no cache lookup, no parse.
  if (auto bits = vm.Tag(sha)) {
    tag = ScriptTag::FromBits(*bits);
  } else {
    std::string body_storage;
    std::string_view body = args[1];
    if (by_sha) {
      auto cached = cache.Get(sha);
      if (!cached) return ReplyError(ctx.out, NoScript());
      body_storage = std::move(*cached);
      body = body_storage;
    }
    std::string_view code;
    std::string code_storage;
    if (Status s = ParseShebang(body, &tag.flags, &code, &code_storage); !s.ok()) {
      return ReplyError(ctx.out, s);
    }
    if (Status s = vm.Compile(sha, code); !s.ok()) return ReplyError(ctx.out, s);
    if (!by_sha) cache.Add(body);
    tag.native = FindNativeScript(sha);
    vm.SetTag(sha, tag.ToBits());
  }
  if (tag.flags.no_cluster && ctx.server.cluster() != nullptr) {
    return ReplyError(ctx.out, ScriptNoClusterFlag());
  }
  if (read_only && tag.flags.shebang && !tag.flags.no_writes) {
    return ReplyError(ctx.out, ScriptRoWithWrites());
  }
  // A script that may write (a shebang without no-writes) is refused up front where writes are
  // (Redis's scriptPrepareForRun); one without a shebang is checked at each write it calls.
  if (tag.flags.shebang && !tag.flags.no_writes) {
    if (Status s = AdmitScriptWrite(ctx); !s.ok()) return ReplyError(ctx.out, s);
  }
  // A known library script runs natively on the planned unit
  // (server/scripting/native/native_scripts.h).
  if (TryRunNativeScript(ctx, tag.native, keys, argv, read_only)) return;

  ScriptExecution exec;
  exec.ctx = &ctx;
  exec.name = sha;
  exec.command = args;
  exec.read_only = read_only || tag.flags.no_writes;
  exec.allow_cross_slot = tag.flags.allow_cross_slot;
  const int db_before = ctx.client.db;  // SELECT inside a script does not outlive it
  ctx.txn();                            // the unit the Dispatcher planned (or EXEC's)
  vm.Run(sha, keys, argv, exec, ctx.out);
  ctx.client.db = db_before;
  CountInterpretedScript(ctx, tag.native);
}

void Eval(CommandContext& ctx, Args args) { EvalGeneric(ctx, args, false, false); }
void EvalSha(CommandContext& ctx, Args args) { EvalGeneric(ctx, args, true, false); }
void EvalRo(CommandContext& ctx, Args args) { EvalGeneric(ctx, args, false, true); }
void EvalShaRo(CommandContext& ctx, Args args) { EvalGeneric(ctx, args, true, true); }
bool EvalDataCall(CommandContext& ctx, Args args) {
  return NativeDataCall(ctx, args, false, false);
}
bool EvalShaDataCall(CommandContext& ctx, Args args) {
  return NativeDataCall(ctx, args, true, false);
}
bool EvalRoDataCall(CommandContext& ctx, Args args) {
  return NativeDataCall(ctx, args, false, true);
}
bool EvalShaRoDataCall(CommandContext& ctx, Args args) {
  return NativeDataCall(ctx, args, true, true);
}

// Routing's view of an EVAL-family call (Redis's evalGetCommandFlags): a script with a shebang
// writes unless it declares no-writes; nullopt (the command's flags decide) for one without, a
// bad shebang or an unknown SHA1.
std::optional<bool> EvalWritesForRouting(CommandContext& ctx, const CommandSpec& spec, Args args) {
  const bool by_sha = spec.name.starts_with("evalsha");
  if (by_sha && args[1].size() != kSha1HexLength) return std::nullopt;
  ScriptFlags flags;
  std::string body_storage, code_storage;
  std::string_view body = args[1], code;
  if (by_sha) {
    ScriptCache& cache = ctx.server.scripting().scripts;
    LuaVm& vm = LuaVm::ForThread(LuaVm::Kind::kEval, cache.generation());
    char buf[kSha1HexLength];
    const std::string_view sha = ScriptSha(args[1], true, buf);
    if (auto bits = vm.Tag(sha)) {
      flags = ScriptTag::FromBits(*bits).flags;
      body = {};
    } else if (auto cached = cache.Get(sha)) {
      body_storage = std::move(*cached);
      body = body_storage;
    } else {
      return std::nullopt;
    }
  }
  if (!body.empty() && !ParseShebang(body, &flags, &code, &code_storage).ok()) return std::nullopt;
  if (!flags.shebang) return std::nullopt;
  return !flags.no_writes;
}

void ScriptLoad(CommandContext& ctx, Args args) {
  ScriptCache& cache = ctx.server.scripting().scripts;
  ScriptTag tag;
  std::string_view code;
  std::string code_storage;
  if (Status s = ParseShebang(args[2], &tag.flags, &code, &code_storage); !s.ok()) {
    return ReplyError(ctx.out, s);
  }
  LuaVm& vm = LuaVm::ForThread(LuaVm::Kind::kEval, cache.generation());
  const std::string sha = Sha1Hex(args[2]);
  if (Status s = vm.Compile(sha, code); !s.ok()) return ReplyError(ctx.out, s);
  cache.Add(args[2]);
  tag.native = FindNativeScript(sha);
  vm.SetTag(sha, tag.ToBits());  // this thread's EVALSHAs of it skip the cache from now on
  ctx.out.Bulk(sha);
}

void ScriptExists(CommandContext& ctx, Args args) {
  ctx.out.Array(args.size() - 2);
  for (size_t i = 2; i < args.size(); ++i) {
    ctx.out.Integer(ctx.server.scripting().scripts.Exists(args[i]) ? 1 : 0);
  }
}

void ScriptFlush(CommandContext& ctx, Args args) {
  if (args.size() > 3 || (args.size() == 3 && !EqualsIgnoreCase(args[2], "sync") &&
                          !EqualsIgnoreCase(args[2], "async"))) {
    return ReplyError(ctx.out, ScriptFlushOption());
  }
  ctx.server.scripting().scripts.Flush();
  ctx.out.Simple("OK");
}

void ScriptKill(CommandContext& ctx, Args) { KillRunningScript(ctx, /*functions=*/false); }

void ScriptHelp(CommandContext& ctx, Args) {
  static constexpr const char* kLines[] = {
      "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "EXISTS <sha1> [<sha1> ...]",
      "    Return information about the existence of the scripts in the script cache.",
      "FLUSH [ASYNC|SYNC]",
      "    Flush the Lua scripts cache. Very dangerous on replicas.",
      "    When called without the optional mode argument, the behavior is determined by the",
      "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
      "    * ASYNC: Asynchronously flush the scripts cache.",
      "    * SYNC: Synchronously flush the scripts cache.",
      "KILL",
      "    Kill the currently executing Lua script.",
      "LOAD <script>",
      "    Load a script into the scripts cache without executing it.",
      "HELP",
      "    Prints this help.",
  };
  ctx.out.Array(std::size(kLines));
  for (const char* line : kLines) ctx.out.Simple(line);
}

void Add(CommandTable& table, std::string name, int arity, uint32_t flags, Handler handler,
         KeyFinder keys, std::string summary, std::string since, std::string hint,
         DataCallCheck data_call = nullptr) {
  CommandSpec spec = MakeSpec("scripting", std::move(name), arity, flags, {}, handler,
                              std::move(summary), std::move(since), std::move(hint));
  spec.find_keys = keys;
  spec.data_call = data_call;
  table.Add(std::move(spec));
}

}  // namespace

int64_t BusyThresholdMs(ServerState& server) { return server.busy_reply_threshold_ms(); }

void KillRunningScript(CommandContext& ctx, bool functions) {
  RunningScripts& running = ctx.server.running_scripts();
  const int64_t now = RunningScripts::SteadyNowMs();
  const int64_t threshold = BusyThresholdMs(ctx.server);
  switch (running.Kill(functions, now, threshold)) {
    case RunningScripts::KillResult::kKilled:
      return ctx.out.Simple("OK");
    case RunningScripts::KillResult::kUnkillable:
      return ReplyError(ctx.out, ScriptUnkillable());
    case RunningScripts::KillResult::kNotBusy:
      break;
  }
  const auto other =
      functions ? RunningScripts::BusyKind::kScript : RunningScripts::BusyKind::kFunction;
  if (running.Busy(now, threshold) == other)
    return ReplyError(ctx.out, Busy(/*function=*/!functions));
  ReplyError(ctx.out, ScriptNotBusy());
}

void RegisterScriptingCommands(CommandTable& table) {
  constexpr uint32_t kEvalFlags =
      kNoScript | kStale | kScriptUnit | kSkipMonitor | kNoMandatoryKeys;
  SetScriptWritesCheck(/*functions=*/false, EvalWritesForRouting);
  const std::string kHint = "script numkeys [key [key ...]] [arg [arg ...]]";
  Add(table, "eval", -3, kEvalFlags, Eval, EvalKeys, "Executes a server-side Lua script.", "2.6.0",
      kHint, EvalDataCall);
  Add(table, "evalsha", -3, kEvalFlags, EvalSha, EvalKeys,
      "Executes a server-side Lua script by SHA1 digest.", "2.6.0",
      "sha1 numkeys [key [key ...]] [arg [arg ...]]", EvalShaDataCall);
  Add(table, "eval_ro", -3, kEvalFlags | kReadOnly, EvalRo, EvalKeys,
      "Executes a read-only server-side Lua script.", "7.0.0", kHint, EvalRoDataCall);
  Add(table, "evalsha_ro", -3, kEvalFlags | kReadOnly, EvalShaRo, EvalKeys,
      "Executes a read-only server-side Lua script by SHA1 digest.", "7.0.0",
      "sha1 numkeys [key [key ...]] [arg [arg ...]]", EvalShaRoDataCall);
  Add(table, "script", -2, 0, nullptr, nullptr, "A container for Lua scripts management commands.",
      "2.6.0", "subcommand");
  Add(table, "script|load", 3, kNoScript | kStale, ScriptLoad, nullptr,
      "Loads a server-side Lua script to the script cache.", "2.6.0", "script");
  Add(table, "script|exists", -3, kNoScript, ScriptExists, nullptr,
      "Determines whether server-side Lua scripts exist in the script cache.", "2.6.0",
      "sha1 [sha1 ...]");
  Add(table, "script|flush", -2, kNoScript, ScriptFlush, nullptr,
      "Removes all server-side Lua scripts from the script cache.", "2.6.0", "[ASYNC|SYNC]");
  Add(table, "script|kill", 2, kNoScript | kAllowBusy, ScriptKill, nullptr,
      "Terminates a server-side Lua script during execution.", "2.6.0", "");
  Add(table, "script|help", 2, kLoading | kStale, ScriptHelp, nullptr,
      "Returns helpful text about the different subcommands.", "5.0.0", "");
}

}  // namespace sluice::server
