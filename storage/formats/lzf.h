// LZF, the compression Redis uses for long strings in RDB files and DUMP payloads. The format:
// a control byte below 32 starts a run of (control + 1) literal bytes; otherwise its top 3 bits
// are (match length - 2) (7: one more byte adds to it) and its low 5 bits with the next byte are
// (distance - 1) back into the output.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace sluice::formats {

// Decompresses `in`, which must expand to exactly `out_len` bytes. False (out unspecified) on any
// malformed input: a reference before the start, a run past the end, a different length.
bool LzfDecompress(std::string_view in, size_t out_len, std::string* out);

// Compresses `in`; nullopt when the result would not be at least 5 bytes shorter (Redis then
// stores the string as it is).
std::optional<std::string> LzfCompress(std::string_view in);

}  // namespace sluice::formats
