#include "wal_check.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace sluice::internal {

namespace {

constexpr uint64_t kBlockSize = 32768;
constexpr uint64_t kHeaderSize = 7;
constexpr uint8_t kMaxRecordType = 10;  // 1-4 full/first/middle/last, 9-10 metadata records
constexpr uint8_t kFirstRecyclable = 5, kLastRecyclable = 8;  // 11-byte headers: not checked
constexpr uint32_t kMaskDelta = 0xa282ead8u;

uint32_t Crc32c(uint32_t crc, const uint8_t* data, size_t n) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82f63b78u : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  crc = ~crc;
  for (size_t i = 0; i < n; ++i) crc = table[(crc ^ data[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

uint32_t Unmask(uint32_t masked) {
  uint32_t rot = masked - kMaskDelta;
  return (rot >> 17) | (rot << 15);
}

bool AllZero(const std::vector<uint8_t>& data, uint64_t from) {
  return std::all_of(data.begin() + static_cast<std::ptrdiff_t>(from), data.end(),
                     [](uint8_t b) { return b == 0; });
}

// The first problem in one file's bytes, or a finding with empty `what` when clean.
WalFinding CheckBytes(const std::vector<uint8_t>& data) {
  WalFinding f;
  f.size = data.size();
  uint64_t offset = 0;
  while (offset < data.size()) {
    const uint64_t block_left = kBlockSize - offset % kBlockSize;
    if (block_left < kHeaderSize) {  // block trailer padding
      offset += block_left;
      continue;
    }
    auto fail = [&](bool torn, const char* what) {
      f.offset = offset;
      f.torn_tail = torn;
      f.what = what;
      return f;
    };
    if (data.size() - offset < kHeaderSize) {
      return AllZero(data, offset) ? f : fail(true, "incomplete record header at the end");
    }
    const uint8_t* h = data.data() + offset;
    const uint32_t length = h[4] | (uint32_t{h[5]} << 8);
    const uint8_t type = h[6];
    if (type == 0 && length == 0 && AllZero(data, offset)) return f;  // preallocated space
    if (type >= kFirstRecyclable && type <= kLastRecyclable)
      return WalFinding{};  // left to RocksDB
    if (type == 0 || type > kMaxRecordType) return fail(false, "invalid record type");
    if (kHeaderSize + length > block_left) return fail(false, "record length beyond its block");
    if (offset + kHeaderSize + length > data.size()) {
      return fail(true, "incomplete record at the end");
    }
    const uint32_t expected =
        Unmask(h[0] | (uint32_t{h[1]} << 8) | (uint32_t{h[2]} << 16) | (uint32_t{h[3]} << 24));
    // The checksum covers the type byte and the payload.
    if (Crc32c(0, h + 6, 1 + length) != expected) return fail(false, "checksum mismatch");
    offset += kHeaderSize + length;
  }
  return f;
}

}  // namespace

namespace {

// RocksDB names its write-ahead logs by number ("000012.log"); any other *.log in the data dir
// (an operator's stderr.log, RocksDB's LOG is not *.log) is not ours to check.
bool IsWalName(const std::filesystem::path& path) {
  if (path.extension() != ".log") return false;
  const std::string stem = path.stem().string();
  return !stem.empty() &&
         std::all_of(stem.begin(), stem.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

std::vector<std::string> WalFiles(const std::string& dir) {
  std::vector<std::string> logs;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (IsWalName(entry.path()) && entry.is_regular_file(ec)) {
      logs.push_back(entry.path().string());
    }
  }
  std::sort(logs.begin(), logs.end());  // zero-padded numbers: name order is number order
  return logs;
}

std::vector<WalFinding> CheckWalFiles(const std::string& dir) {
  std::vector<WalFinding> findings;
  for (const std::string& path : WalFiles(dir)) {
    std::ifstream in(path, std::ios::binary);
    std::vector<uint8_t> data((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
    WalFinding f = CheckBytes(data);
    if (f.what.empty()) continue;
    f.file = path;
    findings.push_back(std::move(f));
  }
  return findings;
}

}  // namespace sluice::internal
