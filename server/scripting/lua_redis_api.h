// The `redis` table scripts see: call, pcall, error_reply, status_reply, sha1hex, log, setresp,
// set_repl, replicate_commands, breakpoint, debug and Redis 7.0's constants. redis.call runs a
// command of the command table through the Dispatcher inside the running script's unit of
// work (LuaVm::current()), with Redis's checks (no-script commands, writes in read-only
// scripts), and converts its reply (server/scripting/lua_convert.h).
#pragma once

struct lua_State;

namespace sluice::server {

void OpenRedisApi(lua_State* L);  // sets the global `redis`

}  // namespace sluice::server
