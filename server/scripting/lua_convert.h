// Redis 7.0's conversions between RESP replies and Lua values, for redis.call and for a
// script's return value. Not thread-safe (operates on one lua_State).
#pragma once

#include <string_view>

#include "protocol/reply_writer.h"

struct lua_State;

namespace sluice::server {

// Pushes the Lua value of the one RESP2/RESP3 reply in `reply` (as redis.call returns it):
// integer -> number, bulk -> string, null bulk / null array -> false, RESP3 null -> nil,
// status -> {ok=s}, error -> {err=s}, array -> table (nested), RESP3 boolean -> boolean,
// double -> {double=n}, map -> {map={k=v}}, set -> {set={m=true}}, big number ->
// {big_number=s}, verbatim -> {verbatim_string={format=f, string=s}}; attributes are skipped.
void PushReply(lua_State* L, std::string_view reply);

// Pushes Redis's error table {err=text}: what redis.call raises and redis.pcall returns.
void PushErrorTable(lua_State* L, std::string_view text);

// Writes the Lua value at `index` as a reply in out's protocol: string -> bulk, number ->
// integer (truncated), boolean -> 1 / null when the script speaks RESP2 (`script_resp`, set by
// redis.setresp), else a boolean, table with err / ok / double /
// big_number / map / set / verbatim_string fields -> that reply, other tables -> array up to
// the first nil, anything else -> null.
void WriteLuaValue(lua_State* L, int index, int script_resp, protocol::ReplyWriter& out);

}  // namespace sluice::server
