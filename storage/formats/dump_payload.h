// DUMP payloads as Redis 7.0 makes them: one RDB object (type byte + value), then the RDB
// version as 2 bytes little endian, then the CRC64 (crc64.h) of everything before it as 8 bytes
// little endian.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "sluice/status.h"
#include "sluice/whole_value.h"

namespace sluice::formats {

// The RDB version Redis 7.0 writes; payloads of a higher version are refused, as Redis does.
constexpr uint16_t kRdbVersion = 10;

// The payload of `value`, which must be a string or a non-empty collection.
std::string MakeDumpPayload(const WholeValue& value);

enum class PayloadCheck {
  kOk,
  kVersionOrChecksum,  // too short, a newer RDB version, or a CRC64 that does not match
  kBadFormat,          // the footer is fine but the object is damaged or of a kind Sluice lacks
};

// Checks the footer, then decodes the object into *out. As Redis, the object is read from the
// start of the whole payload (bytes after it are ignored). With kBadFormat, *why says what was
// wrong (for the log). Nothing is decoded into *out unless the footer checks out.
PayloadCheck ParseDumpPayload(std::string_view payload, WholeValue* out, Status* why);

}  // namespace sluice::formats
