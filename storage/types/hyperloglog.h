// HyperLogLog over bytes, in Redis 7.0's exact representation, so a string Sluice stores for
// PFADD/PFMERGE is byte for byte the string Redis stores for the same operations, and counts
// are the same estimates. Pure functions over std::string: no storage, no clock. Internal
// header (storage/types); the Store operations are in hyperloglog_ops.cc.
//
// The format (facts of Redis's documented layout):
//   header, 16 bytes: "HYLL", encoding (0 dense, 1 sparse), 3 zero bytes, the cached
//     cardinality as 8 bytes little endian whose top bit set means "stale".
//   dense: 16384 registers of 6 bits, packed from the low bit of each byte up (12288 bytes).
//   sparse: run-length opcodes over the registers: ZERO 00xxxxxx (1..64 zero registers), XZERO
//     01xxxxxx yyyyyyyy (1..16384 zero registers), VAL 1vvvvvxx (1..4 registers of value 1..32).
// Elements hash with MurmurHash64A (seed 0xadc83b19): the low 14 bits pick the register, the
// run of zeros above them (plus one) is the value. Counts use Ertl's estimator (tau/sigma), as
// Redis 7.0 does.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sluice::hll {

inline constexpr size_t kHeaderSize = 16;
inline constexpr int kRegisters = 1 << 14;
inline constexpr size_t kDenseSize = kHeaderSize + kRegisters * 6 / 8;
// Redis's hll-sparse-max-bytes default (Options::hll_sparse_max_bytes): a sparse string that
// would grow past it goes dense.
inline constexpr size_t kDefaultSparseMaxBytes = 3000;

// One byte per register (values 0..63), the form merges and multi-key counts work in.
using Registers = std::array<uint8_t, kRegisters>;

enum class Change { kUnchanged, kChanged, kCorrupt };

uint64_t MurmurHash64A(std::string_view data, uint64_t seed);

// A new, empty HyperLogLog (sparse: XZERO opcodes covering every register).
std::string NewSparse();

// Redis's check that a string is an HLL: magic, a known encoding, and a dense one's exact size.
// (A sparse one's opcodes are checked when they are used: kCorrupt / nullopt.)
bool LooksValid(std::string_view s);
bool IsDense(std::string_view s);

// PFADD of one element: raises the element's register if its run is longer; a sparse string may
// be promoted to dense (a register above 32, or growth past sparse_max_bytes). The caller
// invalidates the cached count when anything changed (a sparse update already has).
Change Add(std::string* hll, std::string_view element, size_t sparse_max_bytes);

// Raises register `index` to `value` if it is lower (PFMERGE's write), as Add does.
Change SetRegister(std::string* hll, int index, uint8_t value, size_t sparse_max_bytes);

// Converts a sparse string to dense in place (the header, cached count included, is kept).
// False, leaving it unchanged, when the sparse opcodes do not cover exactly every register.
bool ToDense(std::string* hll);

// Each register of `hll` raised into `max`. False when a sparse string is corrupt.
bool MergeInto(std::string_view hll, Registers* max);

// A sparse string's opcodes as PFDEBUG DECODE prints them: "Z:<n>" (XZERO), "z:<n>" (ZERO),
// "v:<value>,<n>" (VAL), separated by spaces.
std::string DescribeSparse(std::string_view hll);

// The cached count, when the header says it is fresh.
std::optional<uint64_t> CachedCount(std::string_view hll);
void StoreCachedCount(std::string* hll, uint64_t count);
void InvalidateCachedCount(std::string* hll);

// The estimated cardinality; nullopt when a sparse string is corrupt.
std::optional<uint64_t> Count(std::string_view hll);
uint64_t Count(const Registers& registers);

}  // namespace sluice::hll
