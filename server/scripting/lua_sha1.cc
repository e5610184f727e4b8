#include "server/scripting/lua_sha1.h"

#include <xxhash.h>

#include <array>
#include <cstdint>
#include <cstring>

namespace sluice::server {

namespace {

uint32_t Rotl(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

// One 64-byte block into the state.
void Compress(std::array<uint32_t, 5>& h, const unsigned char* block) {
  uint32_t w[80];
  for (int i = 0; i < 16; ++i) {
    w[i] = (uint32_t{block[4 * i]} << 24) | (uint32_t{block[4 * i + 1]} << 16) |
           (uint32_t{block[4 * i + 2]} << 8) | uint32_t{block[4 * i + 3]};
  }
  for (int i = 16; i < 80; ++i) w[i] = Rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
  for (int i = 0; i < 80; ++i) {
    uint32_t f, k;
    if (i < 20) {
      f = (b & c) | (~b & d), k = 0x5A827999;
    } else if (i < 40) {
      f = b ^ c ^ d, k = 0x6ED9EBA1;
    } else if (i < 60) {
      f = (b & c) | (b & d) | (c & d), k = 0x8F1BBCDC;
    } else {
      f = b ^ c ^ d, k = 0xCA62C1D6;
    }
    const uint32_t t = Rotl(a, 5) + f + e + k + w[i];
    e = d, d = c, c = Rotl(b, 30), b = a, a = t;
  }
  h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e;
}

}  // namespace

void Sha1HexTo(std::string_view data, char* out) {
  std::array<uint32_t, 5> h = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  size_t n = data.size();
  size_t i = 0;
  for (; i + 64 <= n; i += 64) Compress(h, p + i);
  // The tail, the 0x80 marker, zero padding and the bit length, in one or two blocks.
  unsigned char tail[128] = {};
  const size_t rest = n - i;
  for (size_t j = 0; j < rest; ++j) tail[j] = p[i + j];
  tail[rest] = 0x80;
  const size_t blocks = rest + 9 <= 64 ? 1 : 2;
  const uint64_t bits = static_cast<uint64_t>(n) * 8;
  for (int j = 0; j < 8; ++j) {
    tail[blocks * 64 - 1 - j] = static_cast<unsigned char>(bits >> (8 * j));
  }
  for (size_t b = 0; b < blocks; ++b) Compress(h, tail + 64 * b);
  static constexpr char kHex[] = "0123456789abcdef";
  for (int w = 0; w < 5; ++w) {
    for (int j = 0; j < 8; ++j) out[w * 8 + j] = kHex[(h[w] >> (28 - 4 * j)) & 0xF];
  }
}

void Sha1HexMemoTo(std::string_view data, char* out) {
  if (data.size() > kSha1MemoMaxBytes) return Sha1HexTo(data, out);
  struct Slot {
    uint64_t hash = 0;
    bool used = false;
    std::string body;
    char sha[kSha1HexLength];
  };
  thread_local std::array<Slot, kSha1MemoSlots> slots;
  const uint64_t hash = XXH3_64bits(data.data(), data.size());
  Slot& slot = slots[hash % kSha1MemoSlots];
  if (slot.used && slot.hash == hash && slot.body == data) {
    std::memcpy(out, slot.sha, kSha1HexLength);
    return;
  }
  Sha1HexTo(data, out);
  slot.hash = hash;
  slot.used = true;
  slot.body.assign(data);
  std::memcpy(slot.sha, out, kSha1HexLength);
}

std::string Sha1Hex(std::string_view data) {
  std::string out(kSha1HexLength, '0');
  Sha1HexTo(data, out.data());
  return out;
}

}  // namespace sluice::server
