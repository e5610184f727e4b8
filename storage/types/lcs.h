// The longest common subsequence of two byte strings, as Redis 7.0's LCS computes it (the same
// table walk, so the same subsequence and the same IDX ranges when several are longest). Pure.
// Internal header (storage/types); the Store operation is in lcs_ops.cc.
#pragma once

#include <cstdint>
#include <string_view>

#include "sluice/transaction.h"

namespace sluice::lcs {

// Bytes of the (len(a)+1) x (len(b)+1) table of 32-bit lengths the computation needs.
uint64_t TableBytes(std::string_view a, std::string_view b);

// The subsequence and the matching ranges of at least min_match_len bytes (0: all), walking from
// the strings' ends backwards as Redis does.
Store::Transaction::LcsReply Compute(std::string_view a, std::string_view b, int64_t min_match_len);

}  // namespace sluice::lcs
