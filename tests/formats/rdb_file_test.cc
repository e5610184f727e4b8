// Whole RDB files: the framing around the objects (header, AUX, SELECTDB, RESIZEDB, expiry
// opcodes, EOF and the file's CRC64), built byte by byte here, and what is refused.
#include "storage/formats/rdb_file.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sluice/store.h"
#include "storage/formats/crc64.h"

namespace sluice::formats {
namespace {

std::string Bytes(std::initializer_list<int> bytes) {
  std::string out;
  for (int b : bytes) out.push_back(static_cast<char>(b));
  return out;
}

// "REDIS" + version + body + EOF + CRC64 of all before it.
std::string File(const std::string& body, const char* version = "0010") {
  std::string f = std::string("REDIS") + version + body + Bytes({0xff});
  const uint64_t crc = Crc64(0, f);
  for (int i = 0; i < 8; ++i) f.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
  return f;
}

// AUX redis-ver 7.0.15, SELECTDB 2, RESIZEDB 2 1, k1 = "v1", EXPIRETIME_MS, k2 = 300 (int).
std::string SampleBody() {
  return Bytes({0xfa, 9}) + "redis-ver" + Bytes({6}) + "7.0.15" + Bytes({0xfe, 2, 0xfb, 2, 1}) +
         Bytes({0x00, 2}) + "k1" + Bytes({2}) + "v1" +
         Bytes({0xfc, 0x00, 0x10, 0xa5, 0xd4, 0xe8, 0x00, 0x00, 0x00}) + Bytes({0x00, 2}) + "k2" +
         Bytes({0xc1, 0x2c, 0x01});
}

std::vector<RdbKey> ReadAll(const std::string& file, Status* status) {
  std::vector<RdbKey> keys;
  RdbVisitor visit;
  visit.key = [&](RdbKey& k) {
    keys.push_back(k);
    return Status::Ok();
  };
  *status = ReadRdbFile(file, visit);
  return keys;
}

TEST_CASE("an RDB file's keys, databases and expiry times") {
  Status s;
  std::vector<RdbKey> keys = ReadAll(File(SampleBody()), &s);
  REQUIRE(s.ok());
  REQUIRE(keys.size() == 2);
  CHECK(keys[0].db == 2);
  CHECK(keys[0].key == "k1");
  CHECK(keys[0].value.string == "v1");
  CHECK(keys[0].expire_at_ms == 0);
  CHECK(keys[1].key == "k2");
  CHECK(keys[1].value.string == "300");
  CHECK(keys[1].expire_at_ms == 1'000'000'000'000);
  // A file written with rdbchecksum no carries a zero checksum, which is not checked.
  std::string unchecked = File(SampleBody());
  unchecked.replace(unchecked.size() - 8, 8, std::string(8, '\0'));
  CHECK(ReadAll(unchecked, &s).size() == 2);
  CHECK(s.ok());
}

TEST_CASE("RDB files that are refused, with the reason") {
  Status s;
  const std::string good = File(SampleBody());
  std::string flipped = good;
  flipped[20] ^= 1;
  CHECK(ReadAll(flipped, &s).empty());
  CHECK(s.message().find("checksum mismatch") != std::string::npos);
  ReadAll(good.substr(0, good.size() - 12), &s);
  CHECK_FALSE(s.ok());
  ReadAll("REDIS", &s);
  CHECK(s.message().find("no REDIS header") != std::string::npos);
  ReadAll(File(SampleBody(), "0011"), &s);
  CHECK(s.message() == "RDB version 11 is not supported (Redis 7.0 writes 10)");
  ReadAll(File(Bytes({0xfe, 16})), &s);
  CHECK(s.message() == "the RDB file uses database 16 (Sluice has databases 0 to 15)");
  ReadAll(File(Bytes({0xf5, 3}) + "lib"), &s);
  CHECK(s.message().find("function libraries") != std::string::npos);
  ReadAll(File(Bytes({0xf7})), &s);
  CHECK(s.message().find("module data") != std::string::npos);
  ReadAll(File(Bytes({0x01, 1}) + "k" + Bytes({0x00})), &s);  // an empty list
  CHECK(s.code() == Code::kCorruption);
  CHECK(s.message().find("key 'k'") != std::string::npos);
  ReadAll(File(Bytes({0x0f, 1}) + "k"), &s);  // a stream cut short
  CHECK(s.code() == Code::kCorruption);
  CHECK(s.message().find("(key 'k')") != std::string::npos);
}

TEST_CASE("a visitor's error stops the walk") {
  int seen = 0;
  RdbVisitor visit;
  visit.key = [&](RdbKey&) {
    ++seen;
    return Status::IOError("disk full");
  };
  Status s = ReadRdbFile(File(SampleBody()), visit);
  CHECK(seen == 1);
  CHECK(s.message() == "disk full");
}

TEST_CASE("function libraries go to the visitor's function, before the keys") {
  std::vector<std::string> order;
  RdbVisitor visit;
  visit.key = [&](RdbKey& k) {
    order.push_back("key " + k.key);
    return Status::Ok();
  };
  visit.function = [&](std::string_view code) {
    order.push_back("lib " + std::string(code));
    return Status::Ok();
  };
  Status s = ReadRdbFile(File(Bytes({0xf5, 4}) + "code" + SampleBody()), visit);
  CHECK(s.ok());
  CHECK(order == std::vector<std::string>{"lib code", "key k1", "key k2"});
}

}  // namespace
}  // namespace sluice::formats
