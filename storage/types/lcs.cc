// LCS by dynamic programming (lcs.h): a table of prefix LCS lengths, then a walk back from the
// bottom right that prefers moving along `b` on ties, recording runs of consecutive matches.
#include "lcs.h"

#include <algorithm>
#include <string>
#include <vector>

namespace sluice::lcs {

uint64_t TableBytes(std::string_view a, std::string_view b) {
  return (uint64_t{a.size()} + 1) * (uint64_t{b.size()} + 1) * sizeof(uint32_t);
}

Store::Transaction::LcsReply Compute(std::string_view a, std::string_view b,
                                     int64_t min_match_len) {
  const size_t rows = a.size() + 1;
  const size_t cols = b.size() + 1;
  // table[i * cols + j]: the LCS length of a[0, i) and b[0, j).
  std::vector<uint32_t> table(rows * cols, 0);
  for (size_t i = 1; i < rows; ++i) {
    for (size_t j = 1; j < cols; ++j) {
      uint32_t& cell = table[i * cols + j];
      if (a[i - 1] == b[j - 1]) {
        cell = table[(i - 1) * cols + j - 1] + 1;
      } else {
        cell = std::max(table[(i - 1) * cols + j], table[i * cols + j - 1]);
      }
    }
  }
  Store::Transaction::LcsReply reply;
  uint32_t left = table.back();
  reply.lcs.assign(left, '\0');
  // The run of matches being collected, in a's and b's indices; none while a_start == npos.
  constexpr size_t kNone = static_cast<size_t>(-1);
  size_t a_start = kNone, a_end = 0, b_start = 0, b_end = 0;
  auto emit = [&] {
    const auto len = static_cast<int64_t>(a_end - a_start + 1);
    if (min_match_len == 0 || len >= min_match_len) {
      reply.matches.push_back({static_cast<int64_t>(a_start), static_cast<int64_t>(a_end),
                               static_cast<int64_t>(b_start), static_cast<int64_t>(b_end)});
    }
    a_start = kNone;
  };
  size_t i = a.size();
  size_t j = b.size();
  while (i > 0 && j > 0) {
    if (a[i - 1] == b[j - 1]) {
      reply.lcs[--left] = a[i - 1];
      bool ends_run = false;
      if (a_start == kNone) {
        a_start = a_end = i - 1;
        b_start = b_end = j - 1;
      } else if (a_start == i && b_start == j) {
        --a_start;
        --b_start;
      } else {
        ends_run = true;  // not contiguous with the run (Redis then drops this match's byte)
      }
      --i;
      --j;
      if (ends_run || a_start == 0 || b_start == 0) emit();
    } else {
      if (table[(i - 1) * cols + j] > table[i * cols + j - 1]) {
        --i;
      } else {
        --j;
      }
      if (a_start != kNone) emit();
    }
  }
  return reply;
}

}  // namespace sluice::lcs
