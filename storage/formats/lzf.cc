#include "storage/formats/lzf.h"

#include <array>
#include <cstdint>

namespace sluice::formats {

namespace {

constexpr size_t kMaxLiteralRun = 32;
constexpr size_t kMaxDistance = 8192;      // 13 bits of (distance - 1)
constexpr size_t kMaxMatch = 2 + 7 + 255;  // 3 bits, then one extra byte
constexpr size_t kHashBits = 14;

uint32_t HashOf3(const unsigned char* p) {
  uint32_t v = (uint32_t{p[0]} << 16) | (uint32_t{p[1]} << 8) | p[2];
  return (v * 2654435761u) >> (32 - kHashBits);
}

// Appends the pending literal bytes [start, end) as runs of at most 32.
void FlushLiterals(std::string_view in, size_t start, size_t end, std::string* out) {
  while (start < end) {
    size_t run = std::min(end - start, kMaxLiteralRun);
    out->push_back(static_cast<char>(run - 1));
    out->append(in.substr(start, run));
    start += run;
  }
}

void EmitMatch(size_t length, size_t distance, std::string* out) {
  size_t len_code = length - 2;
  size_t off = distance - 1;
  if (len_code < 7) {
    out->push_back(static_cast<char>((len_code << 5) | (off >> 8)));
  } else {
    out->push_back(static_cast<char>((7 << 5) | (off >> 8)));
    out->push_back(static_cast<char>(len_code - 7));
  }
  out->push_back(static_cast<char>(off & 0xff));
}

}  // namespace

bool LzfDecompress(std::string_view in, size_t out_len, std::string* out) {
  out->clear();
  out->reserve(out_len);
  size_t i = 0;
  while (i < in.size()) {
    const size_t ctrl = static_cast<unsigned char>(in[i++]);
    if (ctrl < 32) {
      const size_t run = ctrl + 1;
      if (run > in.size() - i || out->size() + run > out_len) return false;
      out->append(in.substr(i, run));
      i += run;
      continue;
    }
    size_t length = ctrl >> 5;
    if (length == 7) {
      if (i >= in.size()) return false;
      length += static_cast<unsigned char>(in[i++]);
    }
    length += 2;
    if (i >= in.size()) return false;
    const size_t distance = ((ctrl & 0x1f) << 8) + static_cast<unsigned char>(in[i++]) + 1;
    if (distance > out->size() || out->size() + length > out_len) return false;
    // Byte by byte: a match may overlap the bytes it produces (a repeated pattern).
    size_t from = out->size() - distance;
    for (size_t k = 0; k < length; ++k) out->push_back((*out)[from + k]);
  }
  return out->size() == out_len;
}

std::optional<std::string> LzfCompress(std::string_view in) {
  if (in.size() < 8) return std::nullopt;
  const auto* p = reinterpret_cast<const unsigned char*>(in.data());
  std::array<int64_t, size_t{1} << kHashBits> last_seen;
  last_seen.fill(-1);
  std::string out;
  out.reserve(in.size());
  size_t literal_start = 0, pos = 0;
  while (pos + 3 <= in.size()) {
    uint32_t h = HashOf3(p + pos);
    int64_t candidate = last_seen[h];
    last_seen[h] = static_cast<int64_t>(pos);
    if (candidate < 0 || pos - candidate > kMaxDistance ||
        in.compare(candidate, 3, in.substr(pos, 3)) != 0) {
      ++pos;
      continue;
    }
    size_t length = 3;
    const size_t limit = std::min(kMaxMatch, in.size() - pos);
    while (length < limit && p[candidate + length] == p[pos + length]) ++length;
    FlushLiterals(in, literal_start, pos, &out);
    EmitMatch(length, pos - static_cast<size_t>(candidate), &out);
    pos += length;
    literal_start = pos;
    if (out.size() + 5 > in.size()) return std::nullopt;
  }
  FlushLiterals(in, literal_start, in.size(), &out);
  if (out.size() + 4 >= in.size()) return std::nullopt;
  return out;
}

}  // namespace sluice::formats
