// Pure codecs: key/value encoding, Redis number rules, glob matching.
#include <doctest/doctest.h>

#include <string>
#include <thread>
#include <vector>

#include "sluice/glob.h"
#include "storage/engine/encoding.h"
#include "storage/types/numeric.h"

namespace sluice::internal {

TEST_CASE("keys encode as db byte + slot + user key and round-trip") {
  std::string raw = EncodeKey(3, std::string_view("a\0b", 3));
  const uint16_t slot = KeySlot(std::string_view("a\0b", 3));
  CHECK(raw ==
        std::string("\x03", 1) + char(slot >> 8) + char(slot & 0xff) + std::string("a\0b", 3));
  int db = -1;
  std::string_view key;
  REQUIRE(DecodeKey(raw, &db, &key));
  CHECK(db == 3);
  CHECK(key == std::string_view("a\0b", 3));
  CHECK(DbPrefix(15) == "\x0f");
  CHECK(DbEnd(15) == "\x10");
  CHECK_FALSE(DecodeKey("", &db, &key));
  CHECK_FALSE(DecodeKey("\x10\0\0k", &db, &key));
  CHECK_FALSE(DecodeKey("\x01\0", &db, &key));  // shorter than db + slot
}

TEST_CASE("hash slots are Redis Cluster's (CRC16 XMODEM mod 16384, hash tags)") {
  // Values from redis-cli CLUSTER KEYSLOT on a Redis 7.0 cluster node.
  CHECK(KeySlot("foo") == 12182);
  CHECK(KeySlot("bar") == 5061);
  CHECK(KeySlot("123456789") == (0x31C3 & 16383));  // CRC16/XMODEM check value 0x31C3
  CHECK(KeySlot("{user1000}.following") == KeySlot("user1000"));
  CHECK(KeySlot("{user1000}.followers") == KeySlot("user1000"));
  CHECK(KeySlot("foo{}{bar}") == KeySlot("foo{}{bar}"));
  CHECK(KeySlot("foo{}{bar}") != KeySlot("bar"));      // an empty tag: the whole key
  CHECK(KeySlot("foo{{bar}}zap") == KeySlot("{bar"));  // from the first '{' to the first '}'
  // Every length around the eight-byte steps, against CRC16/XMODEM bit by bit.
  const auto bitwise = [](std::string_view s) {
    uint16_t crc = 0;
    for (unsigned char c : s) {
      crc ^= static_cast<uint16_t>(c << 8);
      for (int b = 0; b < 8; ++b) {
        crc = (crc & 0x8000) ? static_cast<uint16_t>((crc << 1) ^ 0x1021)
                             : static_cast<uint16_t>(crc << 1);
      }
    }
    return static_cast<uint16_t>(crc & 16383);
  };
  uint32_t seed = 12345;
  for (size_t len = 0; len <= 70; ++len) {
    for (int round = 0; round < 20; ++round) {
      std::string key(len, '\0');
      for (char& c : key) {
        seed = seed * 1103515245 + 12345;
        c = static_cast<char>(seed >> 16);
        if (c == '{') c = '(';  // no hash tag: the whole key is hashed
      }
      CHECK(KeySlot(key) == bitwise(key));
    }
  }
  CHECK(KeySlot("") == 0);
}

// EncodeKeysAhead queues the slots it computed; KeySlot takes them in order. Whatever order the
// keys are then used in (skipped, repeated, interleaved with others, too long to queue), every
// slot and encoding is the one computed from scratch.
TEST_CASE("slots computed ahead are the slots KeySlot computes, in any order of use") {
  const std::string long_key(100, 'k');
  const std::vector<std::string> keys = {"foo", "bar", "{user1000}.a", long_key, "123456789", "x"};
  auto expected = [](std::string_view key) {
    uint16_t slot = 0;
    std::thread([&] { slot = KeySlot(key); }).join();  // a thread with nothing queued
    return slot;
  };
  const std::vector<std::vector<size_t>> orders = {
      {0, 1, 2, 3, 4, 5}, {1, 2, 3, 4, 5}, {0, 0, 2, 1, 4, 5}, {5, 4, 3, 2, 1, 0}, {}};
  for (const auto& order : orders) {
    std::vector<std::string_view> views(keys.begin(), keys.end());
    std::string raw[6];
    EncodeKeysAhead(2, views, raw);
    for (size_t i = 0; i < keys.size(); ++i) CHECK(raw[i] == EncodeKey(2, keys[i]));
    for (size_t i : order) {
      CAPTURE(i);
      CHECK(KeySlot(keys[i]) == expected(keys[i]));
      CHECK(KeySlot("bar") == 5061);  // another key between two queued ones
      CHECK(KeySlot(keys[i]) == expected(keys[i]));
    }
  }
  CHECK(KeySlot("foo") == 12182);
}

TEST_CASE("keys of one slot sort together within a db") {
  const std::string a = EncodeKey(0, "{t}a"), b = EncodeKey(0, "{t}zzz"), c = EncodeKey(0, "x");
  CHECK(a.substr(0, 3) == b.substr(0, 3));
  CHECK(a.compare(0, 1, c, 0, 1) == 0);
  CHECK(DbPrefix(0) <= a);
  CHECK(a < DbEnd(0));
}

TEST_CASE("values round-trip with and without expiry") {
  std::string persistent = EncodeValue(ValueKind::kString, kNoExpiry, "hello");
  CHECK(persistent.size() == 1 + 5);
  auto v = DecodeValue(persistent);
  REQUIRE(v.has_value());
  CHECK(v->kind == ValueKind::kString);
  CHECK(v->expire_at_ms == kNoExpiry);
  CHECK(v->payload == "hello");

  std::string expiring = EncodeValue(ValueKind::kConc, 1767225600123, std::string("\0x", 2));
  CHECK(expiring.size() == 1 + 8 + 2);
  v = DecodeValue(expiring);
  REQUIRE(v.has_value());
  CHECK(v->kind == ValueKind::kConc);
  CHECK(v->expire_at_ms == 1767225600123);
  CHECK(v->payload == std::string_view("\0x", 2));
  CHECK(DecodeExpiry(expiring) == 1767225600123);

  auto empty = DecodeValue(EncodeValue(ValueKind::kLeaky, 0, ""));
  REQUIRE(empty.has_value());
  CHECK(empty->expire_at_ms == 0);
  CHECK(empty->payload.empty());
}

TEST_CASE("a string edited in place keeps its raw mark through the header, expiry or not") {
  const std::string raw = EncodeValue(ValueKind::kString, kNoExpiry, "12", true);
  CHECK(raw == std::string("\x10"
                           "12"));
  auto v = DecodeValue(raw);
  REQUIRE(v.has_value());
  CHECK(v->kind == ValueKind::kString);
  CHECK(v->raw_encoding);
  CHECK(v->payload == "12");
  v = DecodeValue(EncodeValue(ValueKind::kString, 1767225600123, "12", true));
  REQUIRE(v.has_value());
  CHECK(v->raw_encoding);
  CHECK(v->expire_at_ms == 1767225600123);
  CHECK(DecodeExpiry(EncodeValue(ValueKind::kString, 5, "x", true)) == 5);
  // Unmarked strings (and every record written before the mark existed) decode unmarked.
  v = DecodeValue(EncodeValue(ValueKind::kString, kNoExpiry, "12"));
  REQUIRE(v.has_value());
  CHECK_FALSE(v->raw_encoding);
  // The mark belongs to strings: other kinds are written without it.
  const std::string conc = EncodeValue(ValueKind::kConc, kNoExpiry, "x", true);
  CHECK(conc[0] == static_cast<char>(ValueKind::kConc));
  CHECK_FALSE(DecodeValue(conc)->raw_encoding);
}

TEST_CASE("undecodable values are rejected") {
  CHECK_FALSE(DecodeValue("").has_value());
  CHECK_FALSE(DecodeValue("\x09").has_value());  // unknown kind (kinds end at kStream, 8)
  CHECK_FALSE(DecodeValue("\x20"
                          "abc")
                  .has_value());  // unknown format version
  CHECK_FALSE(DecodeValue("\x14"
                          "abc")
                  .has_value());  // the raw-string bit on a set's metadata
  CHECK_FALSE(DecodeValue("\x80"
                          "1234")
                  .has_value());                           // expiry flag, truncated expiry
  CHECK(DecodeValue(std::string("\x00", 1)).has_value());  // empty string, no expiry
}

TEST_CASE("IsExpired follows Redis: expired once now passes the expiry ms") {
  CHECK_FALSE(IsExpired(kNoExpiry, 5));
  CHECK_FALSE(IsExpired(5, 5));
  CHECK(IsExpired(5, 6));
}

TEST_CASE("ParseInt64 follows Redis string2ll") {
  CHECK(ParseInt64("0") == 0);
  CHECK(ParseInt64("-12") == -12);
  CHECK(ParseInt64("9223372036854775807") == INT64_MAX);
  CHECK(ParseInt64("-9223372036854775808") == INT64_MIN);
  for (const char* bad : {"", " 1", "1 ", "+1", "01", "-0", "-", "1.0", "9223372036854775808",
                          "-9223372036854775809", "1a", "00"}) {
    CHECK_MESSAGE(!ParseInt64(bad).has_value(), bad);
  }
}

TEST_CASE("ParseLongDouble follows Redis string2ld") {
  CHECK(ParseLongDouble("1.5") == 1.5L);
  CHECK(ParseLongDouble("5.0e3") == 5000.0L);
  // The whole value must parse: a NUL byte does not end it early.
  CHECK_FALSE(ParseLongDouble(std::string_view("\0abc", 4)).has_value());
  CHECK_FALSE(ParseLongDouble(std::string_view("1.5\0", 4)).has_value());
  CHECK(ParseLongDouble("0x10") == 16.0L);  // strtold reads hex, as Redis does
  CHECK(ParseLongDouble("1.") == 1.0L);
  // Redis 7.0.15 rejects a NUL inside the value (checked: INCRBYFLOAT on "2\x00junk").
  CHECK_FALSE(ParseLongDouble(std::string_view("2\0junk", 6)).has_value());
  CHECK(ParseLongDouble("inf").has_value());
  for (const char* bad : {"", " 1", "1 ", "abc", "nan", "1e5000", "-1e5000", "1e-5000"}) {
    CHECK_MESSAGE(!ParseLongDouble(bad).has_value(), bad);
  }
}

TEST_CASE("FormatLongDouble matches Redis's human-friendly output") {
  CHECK(FormatLongDouble(10.5L + ParseLongDouble("0.1").value()) == "10.6");
  CHECK(FormatLongDouble(5000.0L) == "5000");
  CHECK(FormatLongDouble(3.0L + ParseLongDouble("1.1").value()) == "4.1");
  CHECK(FormatLongDouble(-0.0L) == "0");
  CHECK(FormatLongDouble(0.0L) == "0");
  CHECK(FormatLongDouble(-1.5L) == "-1.5");
  CHECK(FormatLongDouble(-1.0L + 1e-19L) == "-1");
  CHECK(FormatLongDouble(1e20L) == "100000000000000000000");
  // INCRBYFLOAT missing 1e308 on redis-server 7.0.15:
  CHECK(FormatLongDouble(ParseLongDouble("1e308").value()) ==
        "9999999999999999999668587965584564566056009984741556720779704799492173486883806187210012"
        "6921888539320446747225054013223152134749593960583597420814430196418767959100019603190778"
        "6631096045071066679391533957889389145605435630612683649016186302170865892534448816237913"
        "00855757318142424510452728255046343928578048");
}

TEST_CASE("GlobMatch: wildcards") {
  CHECK(GlobMatch("*", "anything"));
  CHECK(GlobMatch("h?llo", "hello"));
  CHECK_FALSE(GlobMatch("h?llo", "hllo"));
  CHECK(GlobMatch("h*llo", "hllo"));
  CHECK(GlobMatch("h*llo", "heeeello"));
  CHECK(GlobMatch("a*b*", "ab"));
  CHECK(GlobMatch("*a*", "a"));
  CHECK_FALSE(GlobMatch("**", ""));  // Redis: only "*" alone matches the empty key (KEYS *)
  CHECK_FALSE(GlobMatch("a*c", "abd"));
  CHECK(GlobMatch("", ""));
  CHECK_FALSE(GlobMatch("", "a"));
}

TEST_CASE("GlobMatch: sets, ranges, negation, escapes") {
  CHECK(GlobMatch("h[ae]llo", "hallo"));
  CHECK_FALSE(GlobMatch("h[ae]llo", "hillo"));
  CHECK(GlobMatch("h[^e]llo", "hallo"));
  CHECK_FALSE(GlobMatch("h[^e]llo", "hello"));
  CHECK(GlobMatch("h[a-b]llo", "hbllo"));
  CHECK(GlobMatch("h[b-a]llo", "hallo"));  // reversed range
  CHECK_FALSE(GlobMatch("h[a-b]llo", "hcllo"));
  CHECK(GlobMatch("a\\*", "a*"));
  CHECK_FALSE(GlobMatch("a\\*", "ab"));
  CHECK(GlobMatch("a[\\]]", "a]"));
  CHECK_FALSE(GlobMatch("a\\", "a"));  // a lone trailing backslash is a literal backslash
  CHECK(GlobMatch("a\\", "a\\"));
}

TEST_CASE("GlobMatch: Redis quirks verified against redis-server 7.0") {
  CHECK(GlobMatch("[a", "a"));      // unterminated set closes at the end
  CHECK(GlobMatch("a[^", "a1"));    // unterminated negated empty set: any byte
  CHECK(GlobMatch("a[a-]", "a]"));  // "a-]" is the range ']'..'a'
  CHECK_FALSE(GlobMatch("a[a-]", "a-"));
  CHECK_FALSE(GlobMatch("[]]*", "]x"));  // "[]" is an empty set
  CHECK(GlobMatch("[^]", "z"));
}

TEST_CASE("GlobMatch: pathological patterns stay fast") {
  std::string s(4000, 'a');
  std::string p;
  for (int i = 0; i < 30; ++i) p += "a*";
  p += "b";
  CHECK_FALSE(GlobMatch(p, s));
}

TEST_CASE("GlobMatch: nocase folds ASCII case (CONFIG GET, COMMAND LIST)") {
  CHECK(GlobMatch("MAX*", "maxclients", true));
  CHECK_FALSE(GlobMatch("MAX*", "maxclients"));
  CHECK(GlobMatch("[A-C]x", "bX", true));
  CHECK(GlobMatch("?ppendfsync", "APPENDFSYNC", true));
}

TEST_CASE("GlobLiteralPrefix") {
  CHECK(GlobLiteralPrefix("user:*") == "user:");
  CHECK(GlobLiteralPrefix("abc") == "abc");
  CHECK(GlobLiteralPrefix("a\\*") == "a");
  CHECK(GlobLiteralPrefix("*x") == "");
}

}  // namespace sluice::internal

namespace sluice::internal {

TEST_CASE("varints: round trip, lengths, and truncated or overlong input refused") {
  for (uint64_t v : {uint64_t{0}, uint64_t{127}, uint64_t{128}, uint64_t{300}, uint64_t{1} << 35,
                     ~uint64_t{0}}) {
    std::string s;
    AppendVarint(&s, v);
    CHECK(s.size() == VarintLength(v));
    size_t at = 0;
    uint64_t back = 1;
    REQUIRE(ReadVarint(s, &at, &back));
    CHECK(back == v);
    CHECK(at == s.size());
    at = 0;
    CHECK_FALSE(ReadVarint(std::string_view(s).substr(0, s.size() - 1), &at, &back));
  }
  std::string overlong(11, '\x80');
  size_t at = 0;
  uint64_t v = 0;
  CHECK_FALSE(ReadVarint(overlong, &at, &v));
}

}  // namespace sluice::internal

namespace sluice::internal {

TEST_CASE("fixed64: little-endian, 8 bytes, round trip") {
  std::string s;
  AppendFixed64(&s, 0x0102030405060708ULL);
  CHECK(s == std::string("\x08\x07\x06\x05\x04\x03\x02\x01", 8));
  AppendFixed64(&s, ~uint64_t{0});
  CHECK(DecodeFixed64(s.data()) == 0x0102030405060708ULL);
  CHECK(DecodeFixed64(s.data() + 8) == ~uint64_t{0});
}

}  // namespace sluice::internal
