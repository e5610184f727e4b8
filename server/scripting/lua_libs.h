// Sluice's own implementations of the two Lua libraries Redis embeds that Debian does not
// package, with the subset scripts use:
//   struct:   struct.pack(fmt, ...), struct.unpack(fmt, s [, pos]), struct.size(fmt); formats
//             "<" ">" "=" little/big/native endian, "!n" alignment, "b B h H l L T i[n] I[n]"
//             integers, "f d" floats, "c[n]" fixed strings ("c0": the length comes from the
//             preceding integer when unpacking, from the string when packing), "s" NUL-ended
//             strings, "x" a pad byte, " " ignored.
//   cmsgpack: cmsgpack.pack(...) -> MessagePack bytes of every argument, concatenated;
//             cmsgpack.unpack(s) -> every value decoded from s. Integral numbers pack as the
//             smallest integer type, others as float32 when exact else float64; tables whose
//             keys are 1..n pack as arrays, others as maps; nesting deeper than 16 packs nil.
// Both are lua_CFunctions: they push the library table (and set no global).
#pragma once

struct lua_State;

namespace sluice::server {

int OpenStructLibrary(lua_State* L);
int OpenCmsgpackLibrary(lua_State* L);

}  // namespace sluice::server
