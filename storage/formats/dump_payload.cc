#include "storage/formats/dump_payload.h"

#include "storage/formats/crc64.h"
#include "storage/formats/rdb_object.h"
#include "storage/formats/rdb_primitives.h"

namespace sluice::formats {

namespace {

constexpr size_t kFooterSize = 2 + 8;  // RDB version, CRC64

}  // namespace

std::string MakeDumpPayload(const WholeValue& value) {
  std::string out;
  WriteTypedObject(value, &out);
  AppendLittleEndian(kRdbVersion, 2, &out);
  AppendLittleEndian(Crc64(0, out), 8, &out);
  return out;
}

PayloadCheck ParseDumpPayload(std::string_view payload, WholeValue* out, Status* why) {
  if (payload.size() < kFooterSize) return PayloadCheck::kVersionOrChecksum;
  ByteReader footer(payload.substr(payload.size() - kFooterSize));
  uint64_t version = 0, crc = 0;
  footer.ReadLittleEndian(2, &version);
  footer.ReadLittleEndian(8, &crc);
  if (version > kRdbVersion) return PayloadCheck::kVersionOrChecksum;
  if (Crc64(0, payload.substr(0, payload.size() - 8)) != crc) {
    return PayloadCheck::kVersionOrChecksum;
  }
  ByteReader in(payload);
  *why = ReadTypedObject(in, out);
  return why->ok() ? PayloadCheck::kOk : PayloadCheck::kBadFormat;
}

}  // namespace sluice::formats
