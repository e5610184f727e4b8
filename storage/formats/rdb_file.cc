#include "storage/formats/rdb_file.h"

#include <string>

#include "storage/formats/crc64.h"
#include "storage/formats/rdb_object.h"
#include "storage/formats/rdb_primitives.h"

namespace sluice::formats {

namespace {

// RDB opcodes (rdb.h of Redis 7.0).
enum Opcode : uint8_t {
  kOpFunction2 = 0xf5,
  kOpFunctionPreGa = 0xf6,
  kOpModuleAux = 0xf7,
  kOpIdle = 0xf8,
  kOpFreq = 0xf9,
  kOpAux = 0xfa,
  kOpResizeDb = 0xfb,
  kOpExpireTimeMs = 0xfc,
  kOpExpireTime = 0xfd,
  kOpSelectDb = 0xfe,
  kOpEof = 0xff,
};

constexpr int kDatabases = 16;
constexpr size_t kHeaderSize = 9;  // "REDIS" + 4 version digits

// The offset in the file (the reader starts after the header).
std::string At(const ByteReader& in) {
  return " at byte " + std::to_string(kHeaderSize + in.position());
}

Status CheckHeader(std::string_view file, int* version) {
  if (file.size() < kHeaderSize || file.substr(0, 5) != "REDIS") {
    return Status::InvalidArgument("not an RDB file (no REDIS header)");
  }
  *version = 0;
  for (char c : file.substr(5, 4)) {
    if (c < '0' || c > '9') return Status::InvalidArgument("not an RDB file (bad version)");
    *version = *version * 10 + (c - '0');
  }
  if (*version < 1 || *version > kRdbFileVersion) {
    return Status::InvalidArgument("RDB version " + std::to_string(*version) +
                                   " is not supported (Redis 7.0 writes 10)");
  }
  return Status::Ok();
}

// The file's last 8 bytes are the CRC64 of everything before them (versions 5 and up).
Status CheckChecksum(std::string_view file, int version) {
  if (version < 5) return Status::Ok();
  if (file.size() < kHeaderSize + 1 + 8) return Status::Corruption("RDB file is truncated");
  ByteReader tail(file.substr(file.size() - 8));
  uint64_t stored = 0;
  tail.ReadLittleEndian(8, &stored);
  if (stored == 0) return Status::Ok();  // written with rdbchecksum no
  if (Crc64(0, file.substr(0, file.size() - 8)) != stored) {
    return Status::Corruption("RDB file checksum mismatch (the file is damaged)");
  }
  return Status::Ok();
}

// Reads one opcode's operands (everything but an object, EOF and SELECTDB's check).
Status SkipOrApplyOpcode(uint8_t op, ByteReader& in, RdbKey* pending) {
  uint64_t a = 0, b = 0;
  uint8_t byte = 0;
  std::string s1, s2;
  switch (op) {
    case kOpAux:
      if (!ReadString(in, &s1) || !ReadString(in, &s2)) return Status::Corruption("bad AUX field");
      return Status::Ok();
    case kOpResizeDb:
      if (!ReadLength(in, &a) || !ReadLength(in, &b)) return Status::Corruption("bad RESIZEDB");
      return Status::Ok();
    case kOpExpireTimeMs:
      if (!in.ReadLittleEndian(8, &a)) return Status::Corruption("bad EXPIRETIME_MS");
      pending->expire_at_ms = static_cast<int64_t>(a);
      return Status::Ok();
    case kOpExpireTime:
      if (!in.ReadLittleEndian(4, &a)) return Status::Corruption("bad EXPIRETIME");
      pending->expire_at_ms = static_cast<int64_t>(a) * 1000;
      return Status::Ok();
    case kOpIdle:
      if (!ReadLength(in, &a)) return Status::Corruption("bad IDLE");
      return Status::Ok();
    case kOpFreq:
      if (!in.ReadByte(&byte)) return Status::Corruption("bad FREQ");
      return Status::Ok();
    case kOpFunctionPreGa:
      return Status::InvalidArgument(
          "the RDB file holds function libraries in the pre-release format of Redis 7.0 RCs");
    case kOpFunction2:
      return Status::InvalidArgument(
          "the RDB file holds function libraries (FUNCTION LOAD), which Sluice does not load "
          "from RDB files yet: FUNCTION DUMP them on Redis and FUNCTION RESTORE them on Sluice, "
          "then load a file saved after FUNCTION FLUSH");
    case kOpModuleAux:
      return Status::InvalidArgument("the RDB file holds module data (Sluice loads no modules)");
    default:
      return Status::Corruption("unknown RDB opcode " + std::to_string(op));
  }
}

}  // namespace

Status ReadRdbFile(std::string_view file, const RdbVisitor& visit) {
  int version = 0;
  if (Status s = CheckHeader(file, &version); !s.ok()) return s;
  if (Status s = CheckChecksum(file, version); !s.ok()) return s;
  ByteReader in(file.substr(kHeaderSize));
  int db = 0;
  RdbKey pending;
  for (;;) {
    uint8_t op = 0;
    if (!in.ReadByte(&op)) return Status::Corruption("RDB file ends before its EOF marker");
    if (op == kOpEof) return Status::Ok();
    if (op == kOpSelectDb) {
      uint64_t index = 0;
      if (!ReadLength(in, &index)) return Status::Corruption("bad SELECTDB" + At(in));
      if (index >= kDatabases) {
        return Status::InvalidArgument("the RDB file uses database " + std::to_string(index) +
                                       " (Sluice has databases 0 to 15)");
      }
      db = static_cast<int>(index);
      continue;
    }
    if (op == kOpAux && visit.aux) {
      std::string name, value;
      if (!ReadString(in, &name) || !ReadString(in, &value)) {
        return Status::Corruption("bad AUX field" + At(in));
      }
      if (Status s = visit.aux(name, value); !s.ok()) return s;
      continue;
    }
    if (op == kOpFunction2 && visit.function) {
      std::string code;
      if (!ReadString(in, &code)) return Status::Corruption("bad FUNCTION2" + At(in));
      if (Status f = visit.function(code); !f.ok()) return f;
      continue;
    }
    if (!IsObjectType(op)) {
      Status s = SkipOrApplyOpcode(op, in, &pending);
      if (!s.ok())
        return s.code() == Code::kCorruption ? Status::Corruption(s.message() + At(in)) : s;
      continue;
    }
    pending.db = db;
    if (!ReadString(in, &pending.key)) return Status::Corruption("bad key" + At(in));
    Status s = ReadObject(op, in, &pending.value);
    if (!s.ok()) {
      return Status(s.code() == Code::kCorruption
                        ? Status::Corruption(s.message() + " (key '" + pending.key + "')" + At(in))
                        : Status::InvalidArgument(s.message() + " in key '" + pending.key + "'"));
    }
    pending.end_offset = kHeaderSize + in.position();
    if (Status v = visit.key(pending); !v.ok()) return v;
    pending = RdbKey{};
  }
}

}  // namespace sluice::formats
