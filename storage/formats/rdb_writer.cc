#include "storage/formats/rdb_writer.h"

#include <string>

#include "storage/formats/crc64.h"
#include "storage/formats/rdb_object.h"
#include "storage/formats/rdb_primitives.h"

namespace sluice::formats {

namespace {
constexpr uint8_t kOpAux = 0xfa;
constexpr uint8_t kOpFunction2 = 0xf5;
constexpr uint8_t kOpExpireTimeMs = 0xfc;
constexpr uint8_t kOpSelectDb = 0xfe;
constexpr uint8_t kOpEof = 0xff;
}  // namespace

void RdbWriter::Emit(std::string_view bytes) {
  crc_ = Crc64(crc_, bytes);
  out_->append(bytes);
}

void RdbWriter::Begin(int64_t ctime_s, std::string_view repl_id, int64_t repl_offset) {
  Emit("REDIS0010");
  Aux("redis-ver", "7.0.15");
  Aux("redis-bits", "64");
  Aux("ctime", std::to_string(ctime_s));
  Aux("used-mem", "0");
  if (!repl_id.empty()) {
    Aux("repl-stream-db", "0");
    Aux("repl-id", repl_id);
    Aux("repl-offset", std::to_string(repl_offset));
  }
  Aux("aof-base", "0");
}

void RdbWriter::Aux(std::string_view name, std::string_view value) {
  scratch_.clear();
  scratch_.push_back(static_cast<char>(kOpAux));
  WriteString(name, &scratch_);
  WriteString(value, &scratch_);
  Emit(scratch_);
}

void RdbWriter::Function(std::string_view code) {
  scratch_.clear();
  scratch_.push_back(static_cast<char>(kOpFunction2));
  WriteString(code, &scratch_);
  Emit(scratch_);
}

void RdbWriter::SelectDb(int db) {
  scratch_.clear();
  scratch_.push_back(static_cast<char>(kOpSelectDb));
  WriteLength(static_cast<uint64_t>(db), &scratch_);
  Emit(scratch_);
}

void RdbWriter::Key(std::string_view key, const WholeValue& value, int64_t expire_at_ms) {
  scratch_.clear();
  if (expire_at_ms != 0) {
    scratch_.push_back(static_cast<char>(kOpExpireTimeMs));
    AppendLittleEndian(static_cast<uint64_t>(expire_at_ms), 8, &scratch_);
  }
  std::string object;
  WriteTypedObject(value, &object);  // type byte, then the value: the key goes between them
  scratch_.push_back(object[0]);
  WriteString(key, &scratch_);
  scratch_.append(object, 1, std::string::npos);
  Emit(scratch_);
}

void RdbWriter::Finish() {
  const char eof = static_cast<char>(kOpEof);
  Emit(std::string_view(&eof, 1));
  std::string crc;
  AppendLittleEndian(crc_, 8, &crc);
  out_->append(crc);
}

}  // namespace sluice::formats
