// HyperLogLog over bytes (hyperloglog.h). Every choice that shapes the stored bytes (where a
// sparse opcode splits, which neighbours merge, when a string goes dense) follows Redis 7.0, so
// the strings are identical to Redis's.
#include "hyperloglog.h"

#include <cmath>
#include <cstring>

namespace sluice::hll {

namespace {

constexpr int kBits = 6;
constexpr uint8_t kRegisterMax = (1 << kBits) - 1;
constexpr int kHashBitsForRun = 64 - 14;  // Redis's HLL_Q
constexpr uint8_t kEncodingDense = 0;
constexpr uint8_t kEncodingSparse = 1;
constexpr size_t kEncodingByte = 4;
constexpr size_t kCacheTopByte = kHeaderSize - 1;

constexpr int kSparseValMax = 32;
constexpr int kSparseValMaxLen = 4;
constexpr int kSparseZeroMaxLen = 64;
constexpr int kSparseXZeroMaxLen = 16384;

// ---- Dense registers: 6 bits each, from the low bit of each byte up.

uint8_t DenseGet(const uint8_t* regs, int index) {
  const size_t bit = static_cast<size_t>(index) * kBits;
  const size_t byte = bit / 8;
  const unsigned shift = bit % 8;
  unsigned value = regs[byte] >> shift;
  // A register that straddles two bytes; the last register never does.
  if (shift > 8 - kBits) value |= static_cast<unsigned>(regs[byte + 1]) << (8 - shift);
  return static_cast<uint8_t>(value & kRegisterMax);
}

void DenseSet(uint8_t* regs, int index, uint8_t value) {
  const size_t bit = static_cast<size_t>(index) * kBits;
  const size_t byte = bit / 8;
  const unsigned shift = bit % 8;
  regs[byte] = static_cast<uint8_t>((regs[byte] & ~(kRegisterMax << shift)) | (value << shift));
  if (shift > 8 - kBits) {
    const unsigned high = 8 - shift;
    regs[byte + 1] =
        static_cast<uint8_t>((regs[byte + 1] & ~(kRegisterMax >> high)) | (value >> high));
  }
}

uint8_t* DenseRegisters(std::string* hll) {
  return reinterpret_cast<uint8_t*>(hll->data()) + kHeaderSize;
}
const uint8_t* DenseRegisters(std::string_view hll) {
  return reinterpret_cast<const uint8_t*>(hll.data()) + kHeaderSize;
}

// ---- Sparse opcodes.

struct Opcode {
  enum Kind { kZero, kXZero, kVal } kind;
  int span;       // registers covered
  int value = 0;  // kVal only
  size_t size;    // bytes
};

Opcode Decode(std::string_view s, size_t at) {
  const auto b = static_cast<uint8_t>(s[at]);
  if ((b & 0x80) != 0) return {Opcode::kVal, (b & 0x3) + 1, ((b >> 2) & 0x1f) + 1, 1};
  if ((b & 0xc0) == 0) return {Opcode::kZero, (b & 0x3f) + 1, 0, 1};
  const int low = at + 1 < s.size() ? static_cast<uint8_t>(s[at + 1]) : 0;
  return {Opcode::kXZero, (((b & 0x3f) << 8) | low) + 1, 0, 2};
}

char ValByte(int value, int len) {
  return static_cast<char>(0x80 | ((value - 1) << 2) | (len - 1));
}

// A run of `len` zero registers: ZERO up to 64, XZERO beyond.
void AppendZeros(std::string* out, int len) {
  if (len > kSparseZeroMaxLen) {
    out->push_back(static_cast<char>(0x40 | ((len - 1) >> 8)));
    out->push_back(static_cast<char>((len - 1) & 0xff));
  } else {
    out->push_back(static_cast<char>(len - 1));
  }
}

// Walks the sparse opcodes, calling f(first_register, opcode) for each. Returns the number of
// registers covered.
template <typename F>
long WalkSparse(std::string_view hll, F&& f) {
  long index = 0;
  for (size_t at = kHeaderSize; at < hll.size();) {
    const Opcode op = Decode(hll, at);
    if (!f(index, op)) return -1;
    index += op.span;
    at += op.size;
  }
  return index;
}

// Redis's merge of adjacent VAL opcodes after an update: up to five opcodes from `from`, each
// pair of equal values whose lengths fit one opcode becomes one.
void MergeAdjacentVals(std::string* s, size_t from) {
  size_t at = from;
  for (int scans = 5; at < s->size() && scans > 0; --scans) {
    const Opcode op = Decode(*s, at);
    if (op.kind != Opcode::kVal) {
      at += op.size;
      continue;
    }
    if (at + 1 < s->size() && ((*s)[at + 1] & 0x80) != 0) {
      const Opcode next = Decode(*s, at + 1);
      if (op.value == next.value && op.span + next.span <= kSparseValMaxLen) {
        (*s)[at + 1] = ValByte(op.value, op.span + next.span);
        s->erase(at, 1);
        continue;  // try the merged opcode against its right neighbour
      }
    }
    ++at;
  }
}

Change PromoteAndSet(std::string* hll, int index, uint8_t value) {
  if (!ToDense(hll)) return Change::kCorrupt;
  DenseSet(DenseRegisters(hll), index, value);
  return Change::kChanged;
}

Change SparseSet(std::string* hll, int index, uint8_t value, size_t sparse_max_bytes) {
  if (value > kSparseValMax) return PromoteAndSet(hll, index, value);
  // The opcode covering `index`, the one before it, and the first register it covers.
  size_t at = kHeaderSize;
  size_t prev = std::string::npos;
  long first = 0;
  Opcode op{Opcode::kZero, 0, 0, 1};
  while (at < hll->size()) {
    op = Decode(*hll, at);
    if (index <= first + op.span - 1) break;
    prev = at;
    at += op.size;
    first += op.span;
  }
  if (op.span == 0 || at >= hll->size()) return Change::kCorrupt;

  if (op.kind == Opcode::kVal && op.value >= value) return Change::kUnchanged;
  if (op.span == 1 && op.kind != Opcode::kXZero) {
    (*hll)[at] = ValByte(value, 1);
  } else {
    // Split the run: what is left of `index`, the new register, what is right of it.
    std::string seq;
    const long last = first + op.span - 1;
    const auto before = static_cast<int>(index - first);
    const auto after = static_cast<int>(last - index);
    if (op.kind == Opcode::kVal) {
      if (before > 0) seq.push_back(ValByte(op.value, before));
      seq.push_back(ValByte(value, 1));
      if (after > 0) seq.push_back(ValByte(op.value, after));
    } else {
      if (before > 0) AppendZeros(&seq, before);
      seq.push_back(ValByte(value, 1));
      if (after > 0) AppendZeros(&seq, after);
    }
    const long growth = static_cast<long>(seq.size()) - static_cast<long>(op.size);
    if (growth > 0 && hll->size() + growth > sparse_max_bytes) {
      return PromoteAndSet(hll, index, value);
    }
    hll->replace(at, op.size, seq);
  }
  MergeAdjacentVals(hll, prev == std::string::npos ? kHeaderSize : prev);
  InvalidateCachedCount(hll);
  return Change::kChanged;
}

// Ertl's tau and sigma ("New cardinality estimation algorithms for HyperLogLog sketches"),
// iterated until the sum stops changing, as Redis computes them.
double Sigma(double x) {
  if (x == 1.0) return INFINITY;
  double y = 1;
  double z = x;
  double previous;
  do {
    x *= x;
    previous = z;
    z += x * y;
    y += y;
  } while (previous != z);
  return z;
}

double Tau(double x) {
  if (x == 0.0 || x == 1.0) return 0.0;
  double y = 1.0;
  double z = 1 - x;
  double previous;
  do {
    x = std::sqrt(x);
    previous = z;
    y *= 0.5;
    z -= std::pow(1 - x, 2) * y;
  } while (previous != z);
  return z / 3;
}

uint64_t Estimate(const std::array<int, 64>& histogram) {
  const double m = kRegisters;
  double z = m * Tau((m - histogram[kHashBitsForRun + 1]) / m);
  for (int j = kHashBitsForRun; j >= 1; --j) {
    z += histogram[j];
    z *= 0.5;
  }
  z += m * Sigma(histogram[0] / m);
  constexpr double kAlphaInf = 0.721347520444481703680;  // 0.5 / ln 2
  return static_cast<uint64_t>(std::llround(static_cast<long double>(kAlphaInf * m * m / z)));
}

}  // namespace

uint64_t MurmurHash64A(std::string_view data, uint64_t seed) {
  constexpr uint64_t m = 0xc6a4a7935bd1e995ULL;
  constexpr int r = 47;
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  const size_t len = data.size();
  // Redis passes the length as an int and multiplies it as one.
  uint64_t h = seed ^ (static_cast<uint64_t>(static_cast<int64_t>(static_cast<int>(len))) * m);
  const size_t whole = len - (len & 7);
  for (size_t i = 0; i < whole; i += 8) {
    uint64_t k = 0;
    for (int b = 7; b >= 0; --b) k = (k << 8) | p[i + b];  // little endian on every host
    k *= m;
    k ^= k >> r;
    k *= m;
    h ^= k;
    h *= m;
  }
  const uint8_t* tail = p + whole;
  const size_t rest = len & 7;
  if (rest > 0) {
    for (size_t b = rest; b-- > 0;) h ^= static_cast<uint64_t>(tail[b]) << (8 * b);
    h *= m;
  }
  h ^= h >> r;
  h *= m;
  h ^= h >> r;
  return h;
}

std::string NewSparse() {
  std::string s(kHeaderSize, '\0');
  std::memcpy(s.data(), "HYLL", 4);
  s[kEncodingByte] = static_cast<char>(kEncodingSparse);
  for (int left = kRegisters; left > 0; left -= kSparseXZeroMaxLen) {
    AppendZeros(&s, left < kSparseXZeroMaxLen ? left : kSparseXZeroMaxLen);
  }
  return s;
}

bool LooksValid(std::string_view s) {
  if (s.size() < kHeaderSize || s.substr(0, 4) != "HYLL") return false;
  const auto encoding = static_cast<uint8_t>(s[kEncodingByte]);
  if (encoding > kEncodingSparse) return false;
  return encoding != kEncodingDense || s.size() == kDenseSize;
}

bool IsDense(std::string_view s) { return static_cast<uint8_t>(s[kEncodingByte]) == 0; }

Change SetRegister(std::string* hll, int index, uint8_t value, size_t sparse_max_bytes) {
  if (IsDense(*hll)) {
    uint8_t* regs = DenseRegisters(hll);
    if (value <= DenseGet(regs, index)) return Change::kUnchanged;
    DenseSet(regs, index, value);
    return Change::kChanged;
  }
  return SparseSet(hll, index, value, sparse_max_bytes);
}

Change Add(std::string* hll, std::string_view element, size_t sparse_max_bytes) {
  uint64_t hash = MurmurHash64A(element, 0xadc83b19ULL);
  const int index = static_cast<int>(hash & (kRegisters - 1));
  hash >>= 14;
  hash |= uint64_t{1} << kHashBitsForRun;  // the run ends by bit Q at the latest
  uint8_t run = 1;
  while ((hash & 1) == 0) {
    ++run;
    hash >>= 1;
  }
  return SetRegister(hll, index, run, sparse_max_bytes);
}

bool ToDense(std::string* hll) {
  if (IsDense(*hll)) return true;
  std::string dense(kDenseSize, '\0');
  std::memcpy(dense.data(), hll->data(), kHeaderSize);
  dense[kEncodingByte] = static_cast<char>(kEncodingDense);
  uint8_t* regs = DenseRegisters(&dense);
  const long covered = WalkSparse(*hll, [&](long first, const Opcode& op) {
    if (op.kind != Opcode::kVal) return true;
    if (first + op.span > kRegisters) return false;
    for (int i = 0; i < op.span; ++i) DenseSet(regs, static_cast<int>(first + i), op.value);
    return true;
  });
  if (covered != kRegisters) return false;
  *hll = std::move(dense);
  return true;
}

bool MergeInto(std::string_view hll, Registers* max) {
  if (IsDense(hll)) {
    const uint8_t* regs = DenseRegisters(hll);
    for (int i = 0; i < kRegisters; ++i) {
      const uint8_t v = DenseGet(regs, i);
      if (v > (*max)[i]) (*max)[i] = v;
    }
    return true;
  }
  const long covered = WalkSparse(hll, [&](long first, const Opcode& op) {
    if (op.kind != Opcode::kVal) return true;
    if (first + op.span > kRegisters) return false;
    for (int i = 0; i < op.span; ++i) {
      uint8_t& slot = (*max)[first + i];
      if (op.value > slot) slot = static_cast<uint8_t>(op.value);
    }
    return true;
  });
  return covered == kRegisters;
}

std::string DescribeSparse(std::string_view hll) {
  std::string out;
  WalkSparse(hll, [&](long, const Opcode& op) {
    if (!out.empty()) out.push_back(' ');
    if (op.kind == Opcode::kVal) {
      out += "v:" + std::to_string(op.value) + "," + std::to_string(op.span);
    } else {
      out += (op.kind == Opcode::kXZero ? "Z:" : "z:") + std::to_string(op.span);
    }
    return true;
  });
  return out;
}

std::optional<uint64_t> CachedCount(std::string_view hll) {
  if ((static_cast<uint8_t>(hll[kCacheTopByte]) & 0x80) != 0) return std::nullopt;
  uint64_t count = 0;
  for (int i = 7; i >= 0; --i) count = (count << 8) | static_cast<uint8_t>(hll[8 + i]);
  return count;
}

void StoreCachedCount(std::string* hll, uint64_t count) {
  for (int i = 0; i < 8; ++i) (*hll)[8 + i] = static_cast<char>((count >> (8 * i)) & 0xff);
}

void InvalidateCachedCount(std::string* hll) {
  (*hll)[kCacheTopByte] = static_cast<char>((*hll)[kCacheTopByte] | 0x80);
}

std::optional<uint64_t> Count(std::string_view hll) {
  std::array<int, 64> histogram{};
  if (IsDense(hll)) {
    const uint8_t* regs = DenseRegisters(hll);
    for (int i = 0; i < kRegisters; ++i) ++histogram[DenseGet(regs, i)];
    return Estimate(histogram);
  }
  // Redis counts a sparse string's histogram as it finds it and only then checks coverage.
  const long covered = WalkSparse(hll, [&](long, const Opcode& op) {
    histogram[op.kind == Opcode::kVal ? op.value : 0] += op.span;
    return true;
  });
  if (covered != kRegisters) return std::nullopt;
  return Estimate(histogram);
}

uint64_t Count(const Registers& registers) {
  std::array<int, 64> histogram{};
  for (uint8_t v : registers) ++histogram[v & 63];
  return Estimate(histogram);
}

}  // namespace sluice::hll
