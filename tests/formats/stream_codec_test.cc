// Streams in Redis's RDB form (storage/formats/rdb_stream.h) against a DUMP redis-server 7.0.15
// wrote: decoded exactly, written back byte for byte; type 15 (Redis 5/6) read; damage refused.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "sluice/store.h"
#include "sluice/stream_whole.h"
#include "storage/formats/crc64.h"
#include "storage/formats/dump_payload.h"
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

std::string WithFooter(std::string object) {
  object += std::string("\x0a\x00", 2);
  const uint64_t crc = Crc64(0, object);
  for (int i = 0; i < 8; ++i) object.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
  return object;
}

// redis-server 7.0.15: XADD s 1-1 a 1 b hello; XADD s 2-0 a 2 b x; XADD s 2-5 c 300;
// XGROUP CREATE s g 0; XREADGROUP GROUP g c1 COUNT 2 STREAMS s >; DUMP s.
constexpr std::string_view kNodes =
    "0110000000000000000100000000000000014044440000001900030100010201816102816202000102010001"
    "000101018568656c6c6f06050102010101dfff02020181780205010001010104010101816302c12c020601ff";
constexpr std::string_view kGroupTail =
    "0200000000000000010000000000000001ab232b27a20100000100000000000000020000000000000000ab232b"
    "27a20100000101026331ab232b27a2010000020000000000000001000000000000000100000000000000020000"
    "000000000000";
const std::string kRedisDump =
    FromHex(std::string("13") + std::string(kNodes) + "03020501010000030101670200" + "02" +
            std::string(kGroupTail) + "0a003d549bc3f6c5054b");

StreamWhole Decoded(const WholeValue& v) {
  StreamWhole s;
  REQUIRE(v.kind == ValueKind::kStream);
  REQUIRE(DecodeStreamWhole(v.string, &s));
  return s;
}

WholeValue Whole(const StreamWhole& s) {
  WholeValue v;
  v.kind = ValueKind::kStream;
  v.string = EncodeStreamWhole(s);
  return v;
}

WholeValue Parse(std::string_view payload) {
  WholeValue v;
  Status why;
  const PayloadCheck check = ParseDumpPayload(payload, &v, &why);
  INFO(why.message());
  REQUIRE(check == PayloadCheck::kOk);
  return v;
}

TEST_CASE("a stream from Redis 7.0.15's DUMP decodes exactly and writes back byte for byte") {
  WholeValue v = Parse(kRedisDump);
  const StreamWhole s = Decoded(v);
  CHECK(s.length == 3);
  CHECK(s.last_id == StreamId{2, 5});
  CHECK(s.first_id == StreamId{1, 1});
  CHECK(s.max_deleted_id == StreamId{});
  CHECK(s.entries_added == 3);
  REQUIRE(s.nodes.size() == 1);
  CHECK(s.nodes[0].master == StreamId{1, 1});
  CHECK(s.nodes[0].master_fields == std::vector<std::string>{"a", "b"});
  CHECK(s.nodes[0].bytes == 68);
  REQUIRE(s.nodes[0].entries.size() == 3);
  CHECK(s.nodes[0].entries[0].id == StreamId{1, 1});
  CHECK(s.nodes[0].entries[0].fields == std::vector<std::string>{"a", "1", "b", "hello"});
  CHECK(s.nodes[0].entries[1].id == StreamId{2, 0});
  CHECK(s.nodes[0].entries[1].fields == std::vector<std::string>{"a", "2", "b", "x"});
  CHECK(s.nodes[0].entries[2].id == StreamId{2, 5});
  CHECK(s.nodes[0].entries[2].fields == std::vector<std::string>{"c", "300"});
  REQUIRE(s.groups.size() == 1);
  const StreamWholeGroup& g = s.groups[0];
  CHECK(g.name == "g");
  CHECK(g.last_id == StreamId{2, 0});
  CHECK(g.entries_read == 2);
  REQUIRE(g.pending.size() == 2);
  CHECK(g.pending[0].id == StreamId{1, 1});
  CHECK(g.pending[0].delivery_count == 1);
  CHECK(g.pending[0].consumer == "c1");
  CHECK(g.pending[1].id == StreamId{2, 0});
  REQUIRE(g.consumers.size() == 1);
  CHECK(g.consumers[0].name == "c1");
  CHECK(g.consumers[0].seen_ms == g.pending[0].delivery_ms);
  CHECK(MakeDumpPayload(v) == kRedisDump);
}

TEST_CASE("type 15 (Redis 5/6) derives entries-added and the groups' entries-read") {
  const std::string t15 = std::string("0f") + std::string(kNodes) + "030205" + "010167" + "0200" +
                          std::string(kGroupTail);
  const StreamWhole s = Decoded(Parse(WithFooter(FromHex(t15))));
  CHECK(s.entries_added == 3);
  CHECK(s.first_id == StreamId{1, 1});
  CHECK(s.groups.at(0).entries_read == -1);  // 2-0 is neither the first nor the last
  CHECK(s.groups.at(0).pending.size() == 2);
}

TEST_CASE("streams Sluice writes read back, many nodes, odd fields, empty and with groups") {
  StreamWhole s;
  std::mt19937_64 rng(19);
  StreamId id{1700000000000, 0};
  for (int n = 0; n < 5; ++n) {
    StreamWholeNode node;
    node.master = id;
    node.master_fields = {"f", std::to_string(n)};
    for (int e = 0; e < 30; ++e) {
      StreamEntry entry{id, {}};
      const int pairs = 1 + static_cast<int>(rng() % 3);
      for (int p = 0; p < pairs; ++p) {
        entry.fields.push_back(p == 0 ? "f" : std::to_string(rng() % 100000 - 50000));
        entry.fields.push_back(rng() % 2 ? std::string(rng() % 5000, 'v') : "-12");
      }
      node.entries.push_back(std::move(entry));
      id = rng() % 2 ? StreamId{id.ms + rng() % 100000, 0} : StreamId{id.ms, id.seq + 1};
    }
    s.nodes.push_back(std::move(node));
  }
  s.length = 150;
  s.last_id = s.nodes.back().entries.back().id;
  s.first_id = s.nodes.front().entries.front().id;
  s.entries_added = 1000;
  s.max_deleted_id = {5, 5};
  StreamWholeGroup g;
  g.name = "12";
  g.last_id = s.last_id;
  g.entries_read = 1000;
  g.pending = {{s.first_id, -5, 7, ""}, {s.last_id, 1, 0, "z"}};
  g.consumers = {{"", 3}, {"z", 4}, {"idle", 0}};
  StreamWholeGroup other;
  other.name = "other";
  s.groups = {g, other};
  StreamWhole back = Decoded(Parse(MakeDumpPayload(Whole(s))));
  for (StreamWholeNode& n : back.nodes) n.bytes = 0;  // the reader measures them
  std::sort(g.consumers.begin(), g.consumers.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  s.groups[0] = g;
  CHECK(EncodeStreamWhole(back) == EncodeStreamWhole(s));

  StreamWhole empty;
  empty.last_id = {9, 9};
  empty.entries_added = 4;
  CHECK(Parse(MakeDumpPayload(Whole(empty))) == Whole(empty));
}

TEST_CASE("damaged or inconsistent streams are a bad format") {
  const StreamWhole v = Decoded(Parse(kRedisDump));
  auto bad = [&](const StreamWhole& w) {
    std::string payload = MakeDumpPayload(Whole(w));
    WholeValue out;
    Status why;
    CHECK(ParseDumpPayload(payload, &out, &why) == PayloadCheck::kBadFormat);
  };
  StreamWhole wrong_length = v;
  wrong_length.length = 4;
  bad(wrong_length);
  StreamWhole orphan = v;  // a PEL entry no consumer owns
  orphan.groups[0].pending[0].consumer = "nobody";
  bad(orphan);
  StreamWhole low_last = v;
  low_last.last_id = {1, 1};
  bad(low_last);
  StreamWhole twice = v;
  twice.groups.push_back(twice.groups[0]);
  bad(twice);
  // Every truncation of Redis's object, and every single-byte change, never crashes the reader
  // (most are refused; a changed value byte may still be a valid stream). As Redis, the reader
  // may run into the 10-byte footer: a cut inside the last few metadata lengths can read them
  // from it (the footer's "0a 00" as entries-added 10 and no groups), which Redis accepts too.
  const std::string object = kRedisDump.substr(0, kRedisDump.size() - 10);
  for (size_t cut = 1; cut < object.size(); ++cut) {
    WholeValue out;
    Status why;
    CAPTURE(cut);
    const PayloadCheck check = ParseDumpPayload(WithFooter(object.substr(0, cut)), &out, &why);
    CHECK((check == PayloadCheck::kBadFormat || (cut == 96 && Decoded(out).groups.empty())));
  }
  std::mt19937_64 rng(7);
  for (int i = 0; i < 2000; ++i) {
    std::string mutated = object;
    mutated[1 + rng() % (mutated.size() - 1)] = static_cast<char>(rng());
    WholeValue out;
    Status why;
    (void)ParseDumpPayload(WithFooter(mutated), &out, &why);
  }
}

TEST_CASE("ListpackBuilder writes Redis's encodings") {
  ListpackBuilder lp;
  for (int64_t v : {0LL, 127LL, 128LL, -1LL, 4095LL, -4096LL, 32767LL, -32768LL, 8388607LL,
                    -8388608LL, 2147483647LL, -2147483648LL, 9223372036854775807LL}) {
    lp.AppendInteger(v);
  }
  lp.AppendString("x");
  lp.AppendString(std::string(100, 'y'));
  lp.AppendString(std::string(5000, 'z'));
  lp.AppendString("-0");
  lp.AppendString("007");
  std::vector<std::string> items;
  REQUIRE(DecodeListpack(lp.Finish(), &items));
  CHECK(items == std::vector<std::string>{
                     "0", "127", "128", "-1", "4095", "-4096", "32767", "-32768", "8388607",
                     "-8388608", "2147483647", "-2147483648", "9223372036854775807", "x",
                     std::string(100, 'y'), std::string(5000, 'z'), "-0", "007"});
}

}  // namespace
}  // namespace sluice::formats
