// CRC-64 as Redis computes it for RDB files and DUMP payloads: the Jones polynomial
// (0xad93d23594c935a9), reflected, initial value 0, no final xor. Check value: "123456789" ->
// 0xe9c6d914c4b8d9ca.
#pragma once

#include <cstdint>
#include <string_view>

namespace sluice::formats {

// Continues `crc` over `bytes` (start with 0). Thread-safe.
uint64_t Crc64(uint64_t crc, std::string_view bytes);

}  // namespace sluice::formats
