// Redis Cluster's hash slot of a key, as the engine files keys under it (the slot is a prefix
// of every encoded key). Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string_view>

namespace sluice {

inline constexpr int kClusterSlots = 16384;

// CRC16 (XMODEM) of the key, or of the part between the first '{' and the first '}' after it
// when that part is not empty, mod 16384: Redis's keyHashSlot.
uint16_t KeyHashSlot(std::string_view key);

}  // namespace sluice
