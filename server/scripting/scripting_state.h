// ScriptingState: what the scripting room keeps for one server, shared by every connection: the
// EVAL script cache, the FUNCTION libraries and the native library scripts' counters. The server
// core holds it opaquely (ServerState::scripting()), so the core never depends on this room.
// Thread-safe as each member is.
#pragma once

#include "server/core/server_state.h"
#include "server/scripting/lua_functions.h"
#include "server/scripting/lua_script_cache.h"
#include "server/scripting/native/native_scripts.h"

namespace sluice::server {

struct ScriptingState {
  ScriptCache scripts;             // EVAL / EVALSHA / SCRIPT
  FunctionRegistry functions;      // FUNCTION / FCALL libraries
  NativeScriptStats native_stats;  // INFO native_scripts
};

// Gives `server` a fresh ScriptingState. Call once, before serving (main, test harnesses).
inline void AttachScripting(ServerState& server) {
  server.attach_scripting(std::make_shared<ScriptingState>());
}

}  // namespace sluice::server
