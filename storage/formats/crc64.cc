#include "storage/formats/crc64.h"

#include <array>

namespace sluice::formats {

namespace {

// The Jones polynomial with its bits reversed, for the reflected (LSB-first) algorithm.
constexpr uint64_t kReflectedPoly = 0x95ac9329ac4bc9b5ULL;

constexpr std::array<uint64_t, 256> MakeTable() {
  std::array<uint64_t, 256> table{};
  for (uint64_t i = 0; i < 256; ++i) {
    uint64_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc & 1) ? (crc >> 1) ^ kReflectedPoly : crc >> 1;
    table[i] = crc;
  }
  return table;
}

constexpr std::array<uint64_t, 256> kTable = MakeTable();

}  // namespace

uint64_t Crc64(uint64_t crc, std::string_view bytes) {
  for (unsigned char byte : bytes) crc = kTable[(crc ^ byte) & 0xff] ^ (crc >> 8);
  return crc;
}

}  // namespace sluice::formats
