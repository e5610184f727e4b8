// Sluice's own implementations of three Lua libraries Redis embeds (Debian packages no
// struct or cmsgpack, and its lua-bitop lacks Redis's bit.tohex fix), with the subset scripts use:
//   bit:      LuaBitOp 1.0's tobit, bnot, band, bor, bxor, lshift, rshift, arshift, rol, ror,
//             bswap, tohex (numbers to 32 bits as LuaBitOp does; tohex's count clamped safely).
//   struct:   struct.pack(fmt, ...), struct.unpack(fmt, s [, pos]), struct.size(fmt); formats
//             "<" ">" "=" little/big/native endian, "!n" alignment, "b B h H l L T i[n] I[n]"
//             integers, "f d" floats, "c[n]" fixed strings ("c0": the length comes from the
//             preceding integer when unpacking, from the string when packing), "s" NUL-ended
//             strings, "x" a pad byte, " " ignored.
//   cmsgpack: cmsgpack.pack(...) -> MessagePack bytes of every argument, concatenated;
//             cmsgpack.unpack(s) -> every value decoded from s;
//             cmsgpack.unpack_one(s [, offset]) and cmsgpack.unpack_limit(s, limit [, offset])
//             -> the offset of the next value (-1 at the end), then up to 1 / limit values
//             decoded from byte `offset` on (Redis's quirk kept: limit 0 with offset 0 decodes
//             everything and returns no offset). Integral numbers pack as the
//             smallest integer type, others as float32 when exact else float64; tables whose
//             keys are 1..n pack as arrays, others as maps; nesting deeper than 16 packs nil.
// All are lua_CFunctions: they push the library table (and set no global).
#pragma once

struct lua_State;

namespace sluice::server {

int OpenBitLibrary(lua_State* L);

// Replaces cjson.encode in the cjson table at stack index `cjson` by a wrapper that refuses
// (with an error) a value whose encoding could pass 512 MB, where Debian's lua-cjson 2.1.0
// overflows its buffer's int sizes (CVE-2022-24834 in Redis's copy). Same replies otherwise.
void GuardCjsonEncode(lua_State* L, int cjson);
int OpenStructLibrary(lua_State* L);
int OpenCmsgpackLibrary(lua_State* L);

}  // namespace sluice::server
