// SHA-1 (FIPS 180-4) of a byte string, as the lower-case hex text Redis names scripts by.
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace sluice::server {

inline constexpr size_t kSha1HexLength = 40;

std::string Sha1Hex(std::string_view data);  // 40 lower-case hex digits
// The same 40 digits into out[0..39] (no terminator), without allocating.
void Sha1HexTo(std::string_view data, char* out);
// Sha1HexTo for EVAL's body, which clients send again and again: the thread remembers the
// digests of the last bodies it hashed (up to kSha1MemoSlots of at most kSha1MemoMaxBytes
// each, found by a 64-bit hash and confirmed by comparing the bodies), so a repeated body costs
// a hash and a compare (SHA-1 of a 320-byte body: 2.3 us on the 2-core VM, 17% of an EVAL's
// server CPU on one hot key). Memory: at most kSha1MemoSlots * kSha1MemoMaxBytes per thread.
inline constexpr size_t kSha1MemoSlots = 64;
inline constexpr size_t kSha1MemoMaxBytes = 16 * 1024;
void Sha1HexMemoTo(std::string_view data, char* out);

}  // namespace sluice::server
