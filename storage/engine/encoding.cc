#include "encoding.h"

#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>

namespace sluice::internal {
namespace {

constexpr unsigned char kKindMask = 0x0f;
// Format bits: 0 in every record but a string's, which may carry kRawString (Entry::raw_encoding;
// builds before 2026-12-03 refuse such a record as damaged).
constexpr unsigned char kVersionMask = 0x70;
constexpr unsigned char kRawString = 0x10;
constexpr unsigned char kHasExpiry = 0x80;
constexpr size_t kExpiryBytes = 8;

bool ValidKind(unsigned char k) { return k <= static_cast<unsigned char>(ValueKind::kStream); }

// CRC16-CCITT (XMODEM: polynomial 0x1021, initial value 0), the checksum Redis Cluster uses,
// eight bytes a step ("slicing-by-8"): table k holds a byte's CRC followed by k zero bytes. The
// CRC is linear, so a step's result is the XOR of each byte's entry, the running CRC's two bytes
// folded into the first two. One byte a step was a chain of dependent table loads, ~4 cycles a
// byte (1.7% of the server's samples under BullMQ's worker, whose keys are ~25 bytes).
struct Crc16Tables {
  uint16_t v[8][256];
};

constexpr Crc16Tables MakeCrc16Tables() {
  Crc16Tables t{};
  for (int i = 0; i < 256; ++i) {
    uint16_t crc = static_cast<uint16_t>(i << 8);
    for (int b = 0; b < 8; ++b) {
      crc = (crc & 0x8000) ? static_cast<uint16_t>((crc << 1) ^ 0x1021)
                           : static_cast<uint16_t>(crc << 1);
    }
    t.v[0][i] = crc;
  }
  for (int k = 1; k < 8; ++k) {
    for (int i = 0; i < 256; ++i) {
      const uint16_t prev = t.v[k - 1][i];
      t.v[k][i] = static_cast<uint16_t>((prev << 8) ^ t.v[0][prev >> 8]);
    }
  }
  return t;
}
constexpr Crc16Tables kCrc16 = MakeCrc16Tables();

uint16_t Crc16(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t n = s.size();
  uint16_t crc = 0;
  const auto& t = kCrc16.v;
  for (; n >= 8; p += 8, n -= 8) {
    crc = static_cast<uint16_t>(t[7][(crc >> 8) ^ p[0]] ^ t[6][(crc & 0xff) ^ p[1]] ^ t[5][p[2]] ^
                                t[4][p[3]] ^ t[3][p[4]] ^ t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]]);
  }
  for (; n > 0; ++p, --n) crc = static_cast<uint16_t>((crc << 8) ^ t[0][(crc >> 8) ^ *p]);
  return crc;
}

}  // namespace

const char* ElementCfName(ElementCf cf) {
  switch (cf) {
    case ElementCf::kHash:
      return "hash";
    case ElementCf::kSet:
      return "set";
    case ElementCf::kList:
      return "list";
    case ElementCf::kZSet:
      return "zset";
    case ElementCf::kZScore:
      return "zscore";
    case ElementCf::kStream:
      return "stream";
  }
  return "?";
}

std::string EncodeKey(int db, std::string_view user_key) {
  std::string out;
  EncodeKeyTo(db, user_key, &out);
  return out;
}

namespace {

uint16_t ComputeKeySlot(std::string_view user_key) {
  const size_t open = user_key.find('{');
  if (open != std::string_view::npos) {
    const size_t close = user_key.find('}', open + 1);
    if (close != std::string_view::npos && close > open + 1) {
      return Crc16(user_key.substr(open + 1, close - open - 1)) & 16383;
    }
  }
  return Crc16(user_key) & 16383;
}

// The last short key's slot, per thread. One command encodes its key a dozen times (lock
// planning, claims, reads, writes, a collection's element prefix), and the CRC's byte-by-byte
// dependency chain made KeySlot 5% of a list script's CPU; comparing the key is much cheaper.
// Constant-initialised and trivially destructible: the thread_locals need no guard or destructor.
struct RememberedSlot {
  static constexpr size_t kMaxKeyBytes = 64;
  size_t size = SIZE_MAX;  // none yet
  uint16_t slot = 0;
  char key[kMaxKeyBytes];

  bool Holds(std::string_view user_key) const {
    return user_key.size() == size && std::memcmp(user_key.data(), key, size) == 0;
  }
  // False (and nothing kept) for a key too long to remember.
  bool Set(std::string_view user_key, uint16_t s) {
    if (user_key.size() > kMaxKeyBytes) return false;
    std::memcpy(key, user_key.data(), user_key.size());
    size = user_key.size();
    slot = s;
    return true;
  }
};
thread_local RememberedSlot memo;

}  // namespace

// One 8-byte load or store on a little-endian host (the byte-by-byte form, one push_back per
// byte, was ~650 instructions of every LPUSH: collection metadata is four of these).
uint64_t DecodeFixed64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  return v;
}

void AppendFixed64(std::string* out, uint64_t v) {
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  char bytes[8];
  std::memcpy(bytes, &v, 8);
  out->append(bytes, 8);
}

size_t VarintLength(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

void AppendVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

bool ReadVarint(std::string_view s, size_t* at, uint64_t* v) {
  *v = 0;
  for (int shift = 0; shift < 64 && *at < s.size(); shift += 7) {
    const auto byte = static_cast<unsigned char>(s[(*at)++]);
    *v |= uint64_t{byte & 0x7fu} << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

namespace {

void EncodeWithSlot(int db, uint16_t slot, std::string_view user_key, std::string* out) {
  out->clear();
  out->reserve(kKeyPrefixBytes + user_key.size());
  out->push_back(static_cast<char>(db));
  out->push_back(static_cast<char>(slot >> 8));
  out->push_back(static_cast<char>(slot & 0xff));
  out->append(user_key);
}

// The slots EncodeKeysAhead computed, in the order the thread's next commands use their keys:
// [ahead_front, ahead_end) not yet used.
constexpr size_t kAheadSlots = 16;
thread_local RememberedSlot ahead[kAheadSlots];
thread_local size_t ahead_front = 0;
thread_local size_t ahead_end = 0;

// The queued slot of user_key, if queued: usually the front; a command that did not use its key
// (an error before it) leaves its entry behind, so the rest is searched too.
std::optional<uint16_t> TakeAheadSlot(std::string_view user_key) {
  for (size_t i = ahead_front; i < ahead_end; ++i) {
    if (ahead[i].Holds(user_key)) {
      ahead_front = i + 1;
      return ahead[i].slot;
    }
  }
  return std::nullopt;
}

}  // namespace

uint16_t KeySlot(std::string_view user_key) {
  if (memo.Holds(user_key)) return memo.slot;
  const std::optional<uint16_t> queued = TakeAheadSlot(user_key);
  const uint16_t slot = queued ? *queued : ComputeKeySlot(user_key);
  memo.Set(user_key, slot);
  return slot;
}

void EncodeKeysAhead(int db, std::span<const std::string_view> keys, std::string* out) {
  ahead_front = ahead_end = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    const std::string_view key = keys[i];
    const uint16_t slot = ComputeKeySlot(key);
    if (ahead_end < kAheadSlots && ahead[ahead_end].Set(key, slot)) ++ahead_end;
    EncodeWithSlot(db, slot, key, &out[i]);
  }
}

void EncodeKeyTo(int db, std::string_view user_key, std::string* out) {
  EncodeWithSlot(db, KeySlot(user_key), user_key, out);
}

std::string DbPrefix(int db) { return std::string(1, static_cast<char>(db)); }
std::string DbEnd(int db) { return std::string(1, static_cast<char>(db + 1)); }

bool DecodeKey(std::string_view raw, int* db, std::string_view* user_key) {
  if (raw.size() < kKeyPrefixBytes) return false;
  int d = static_cast<unsigned char>(raw[0]);
  if (d >= kNumDatabases) return false;
  *db = d;
  *user_key = raw.substr(kKeyPrefixBytes);
  return true;
}

size_t EncodeValueHeader(ValueKind kind, int64_t expire_at_ms, char (&out)[kMaxValueHeader],
                         bool raw_encoding) {
  bool expires = expire_at_ms != kNoExpiry;
  unsigned char tag = static_cast<unsigned char>(kind);
  if (expires) tag |= kHasExpiry;
  if (raw_encoding && kind == ValueKind::kString) tag |= kRawString;
  out[0] = static_cast<char>(tag);
  if (!expires) return 1;
  const auto v = static_cast<uint64_t>(expire_at_ms);
  for (size_t i = 0; i < kExpiryBytes; ++i) out[1 + i] = static_cast<char>(v >> (8 * i));
  return 1 + kExpiryBytes;
}

std::string EncodeValue(ValueKind kind, int64_t expire_at_ms, std::string_view payload,
                        bool raw_encoding) {
  char header[kMaxValueHeader];
  const size_t n = EncodeValueHeader(kind, expire_at_ms, header, raw_encoding);
  std::string out;
  out.reserve(n + payload.size());
  out.append(header, n);
  out.append(payload);
  return out;
}

std::optional<EntryView> DecodeValue(std::string_view raw) {
  if (raw.empty()) return std::nullopt;
  auto tag = static_cast<unsigned char>(raw[0]);
  if (!ValidKind(tag & kKindMask)) return std::nullopt;
  EntryView v;
  v.kind = static_cast<ValueKind>(tag & kKindMask);
  const unsigned char format = tag & kVersionMask;
  v.raw_encoding = format == kRawString;
  if (format != 0 && !(v.raw_encoding && v.kind == ValueKind::kString)) return std::nullopt;
  size_t pos = 1;
  if (tag & kHasExpiry) {
    if (raw.size() < 1 + kExpiryBytes) return std::nullopt;
    v.expire_at_ms = static_cast<int64_t>(DecodeFixed64(raw.data() + 1));
    if (v.expire_at_ms < 0) return std::nullopt;
    pos += kExpiryBytes;
  }
  v.payload = raw.substr(pos);
  return v;
}

std::optional<int64_t> DecodeExpiry(std::string_view raw) {
  auto v = DecodeValue(raw);
  if (!v) return std::nullopt;
  return v->expire_at_ms;
}

}  // namespace sluice::internal
