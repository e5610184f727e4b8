// The RDB codec against bytes redis-server 7.0.15 produced (DUMP of each encoding), its own
// round trips, and damaged input refused.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "sluice/store.h"
#include "storage/formats/crc64.h"
#include "storage/formats/dump_payload.h"
#include "storage/formats/lzf.h"
#include "storage/formats/packed.h"

namespace sluice::formats {
namespace {

std::string FromHex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

WholeValue Parse(std::string_view payload) {
  WholeValue v;
  Status why;
  REQUIRE(ParseDumpPayload(payload, &v, &why) == PayloadCheck::kOk);
  return v;
}

WholeValue Str(std::string s) {
  WholeValue v;
  v.kind = ValueKind::kString;
  v.string = std::move(s);
  return v;
}

TEST_CASE("CRC64 is Jones's, as Redis computes it") {
  CHECK(Crc64(0, "123456789") == 0xe9c6d914c4b8d9caULL);
  CHECK(Crc64(Crc64(0, "1234"), "56789") == 0xe9c6d914c4b8d9caULL);
  CHECK(Crc64(0, "") == 0);
}

TEST_CASE("LZF: round trips, and malformed input is refused") {
  std::mt19937_64 rng(41);
  for (int round = 0; round < 200; ++round) {
    std::string s;
    const size_t len = rng() % 3000 + 1;
    const int alphabet = round % 2 == 0 ? 3 : 256;  // compressible, then mostly not
    for (size_t i = 0; i < len; ++i) s.push_back(static_cast<char>(rng() % alphabet));
    std::optional<std::string> packed = LzfCompress(s);
    if (!packed) continue;
    CHECK(packed->size() + 4 < s.size());
    std::string back;
    REQUIRE(LzfDecompress(*packed, s.size(), &back));
    CHECK(back == s);
  }
  CHECK(LzfCompress(std::string(1000, 'a')).has_value());
  std::string out;
  CHECK_FALSE(LzfDecompress(std::string("\x20\x05", 2), 3, &out));  // reference before start
  CHECK_FALSE(LzfDecompress(std::string("\x03"
                                        "ab",
                                        3),
                            4, &out));  // run past the end
  CHECK_FALSE(LzfDecompress(std::string("\x01"
                                        "ab",
                                        3),
                            3, &out));  // shorter than promised
}

TEST_CASE("Redis 7.0.15's DUMP payloads decode") {
  CHECK(Parse(FromHex("00c139300a009d94ea2793fc08b9")) == Str("12345"));
  CHECK(Parse(FromHex("00c290eefeff0a002875de7b13eb2800")) == Str("-70000"));
  CHECK(Parse(FromHex("00c3093c016161e02f000161610a00a67e08b217d09780")) ==
        Str(std::string(60, 'a')));
  WholeValue hash =
      Parse(FromHex("1016160000000400826631038276310382663203c12c02ff0a00f8152cbdbe4577b5"));
  CHECK(hash.kind == ValueKind::kHash);
  CHECK(hash.fields ==
        std::vector<std::pair<std::string, std::string>>{{"f1", "v1"}, {"f2", "300"}});
  WholeValue intset =
      Parse(FromHex("0b140400000003000000fdffffff05000000701101000a009db067c236a65f3f"));
  CHECK(intset.kind == ValueKind::kSet);
  CHECK(intset.elements == std::vector<std::string>{"-3", "5", "70000"});
  WholeValue set = Parse(FromHex("0202017801790a00ac3a8d681184aa31"));
  CHECK(set.elements == std::vector<std::string>{"x", "y"});
  WholeValue zset =
      Parse(FromHex("1117170000000400826d3203dffe02826d310383312e3504ff0a00e39adfa2eb138b36"));
  CHECK(zset.kind == ValueKind::kZSet);
  CHECK(zset.scored == std::vector<std::pair<std::string, double>>{{"m2", -2}, {"m1", 1.5}});
  WholeValue list =
      Parse(FromHex("120102"
                    "0f0f000000030081610281620201"
                    "01ff0a00e01bab4a47ce5922"));
  CHECK(list.kind == ValueKind::kList);
  CHECK(list.elements == std::vector<std::string>{"a", "b", "1"});
}

TEST_CASE("Sluice's payloads round trip, with int encoding and LZF") {
  std::vector<WholeValue> values = {
      Str("hello"), Str("12345"), Str("-1"), Str(""), Str(std::string(500, 'x')), Str("00123")};
  WholeValue list;
  list.kind = ValueKind::kList;
  list.elements = {"a", std::string(300, 'b'), "7", ""};
  WholeValue hash;
  hash.kind = ValueKind::kHash;
  hash.fields = {{"f", "v"}, {"n", "42"}};
  WholeValue zset;
  zset.kind = ValueKind::kZSet;
  zset.scored = {{"a", -1.25}, {"b", 3e300}, {"c", HUGE_VAL}};
  values.insert(values.end(), {list, hash, zset});
  for (const WholeValue& v : values) CHECK(Parse(MakeDumpPayload(v)) == v);
  // Redis's own encodings of "12345" and of 60 'a's, byte for byte.
  CHECK(MakeDumpPayload(Str("12345")) == FromHex("00c139300a009d94ea2793fc08b9"));
}

TEST_CASE("damaged payloads are refused with the check that failed") {
  const std::string good = MakeDumpPayload(Str("hello world"));
  WholeValue v;
  Status why;
  for (size_t i = 0; i < good.size(); ++i) {  // any flipped byte: footer or CRC mismatch
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ 0x40);
    CHECK(ParseDumpPayload(bad, &v, &why) == PayloadCheck::kVersionOrChecksum);
  }
  for (size_t n = 0; n < good.size(); ++n) {
    CHECK(ParseDumpPayload(good.substr(0, n), &v, &why) == PayloadCheck::kVersionOrChecksum);
  }
  // RDB version 11 with a correct CRC: still refused, as Redis 7.0 refuses newer versions.
  std::string newer = good.substr(0, good.size() - 10) + std::string("\x0b\x00", 2);
  const uint64_t crc = Crc64(0, newer);
  for (int i = 0; i < 8; ++i) newer.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
  CHECK(ParseDumpPayload(newer, &v, &why) == PayloadCheck::kVersionOrChecksum);
}

std::string WithFooter(std::string object) {
  object += std::string("\x0a\x00", 2);
  const uint64_t crc = Crc64(0, object);
  for (int i = 0; i < 8; ++i) object.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
  return object;
}

TEST_CASE("objects that are well framed but wrong are a bad format") {
  WholeValue v;
  Status why;
  const char* cases[] = {
      "0100",                    // an empty list
      "020201610161",            // a set with a repeated member
      "0402016101620161016300",  // a hash with a repeated field (and a stray byte)
      "06",                      // a module value
      "0f",                      // a stream with nothing after its type
      "ee",                      // no such type
      "00c3ff",                  // LZF with a length past the end
      "0b0800000001000000",      // an intset of width 8 with no member bytes
  };
  for (const char* hex : cases) {
    CAPTURE(hex);
    CHECK(ParseDumpPayload(WithFooter(FromHex(hex)), &v, &why) == PayloadCheck::kBadFormat);
    CHECK_FALSE(why.ok());
  }
  // As Redis, the object is read from the whole payload: a string may run into the footer.
  CHECK(ParseDumpPayload(WithFooter(FromHex("000241")), &v, &why) == PayloadCheck::kOk);
}

TEST_CASE("random and mutated objects under a valid footer never crash the reader") {
  std::mt19937_64 rng(4141);
  std::vector<std::string> seeds = {
      FromHex("1016160000000400826631038276310382663203c12c02ff"),
      FromHex("0b140400000003000000fdffffff05000000701101"),
      FromHex("1117170000000400826d3203dffe02826d310383312e3504ff"),
      FromHex("1201020f0f000000030081610281620201"
              "01ff"),
      FromHex("00c3093c016161e02f00016161"),
  };
  WholeValue v;
  Status why;
  for (int round = 0; round < 20000; ++round) {
    std::string obj;
    if (round % 2 == 0) {
      obj = seeds[rng() % seeds.size()];
      const int edits = 1 + static_cast<int>(rng() % 4);
      for (int e = 0; e < edits && !obj.empty(); ++e) {
        obj[rng() % obj.size()] = static_cast<char>(rng());
      }
      if (rng() % 4 == 0) obj.resize(rng() % (obj.size() + 1));
    } else {
      obj.resize(rng() % 64);
      for (char& c : obj) c = static_cast<char>(rng());
      if (!obj.empty()) obj[0] = static_cast<char>(rng() % 21);  // an object type byte
    }
    const PayloadCheck r = ParseDumpPayload(WithFooter(obj), &v, &why);
    CHECK(r != PayloadCheck::kVersionOrChecksum);
  }
}

}  // namespace
}  // namespace sluice::formats
