// The cluster bus codec against Redis 7.0's clusterMsg layout, including a MEET captured from a
// real redis-server 7.0.15 (CLUSTER ADDSLOTS 0 1 5 16383, SET-CONFIG-EPOCH 7,
// cluster-announce-hostname cap-host, then CLUSTER MEET toward a listening socket).
#include "server/cluster/bus_message.h"

#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

namespace sluice::server::cluster {
namespace {

std::string Unhex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

// The capture: 2280 zero bytes with these non-zero regions.
std::string CapturedMeet() {
  static const std::vector<std::pair<size_t, const char*>> kRegions = {
      {0, "52436d62000008e8000169e70002"},
      {23, "07"},
      {31, "07"},
      {40, "3730653865653438353833323034623666383266323530383863623333666266376537636136376523"},
      {2127, "80"},
      {2215, "01"},
      {2248, "90f700110104"},
      {2259, "18"},
      {2264, "6361702d686f7374"},
  };
  std::string bytes(2280, '\0');
  for (const auto& [at, hex] : kRegions) {
    const std::string r = Unhex(hex);
    bytes.replace(at, r.size(), r);
  }
  return bytes;
}

TEST_CASE("a real redis-server 7.0.15 MEET decodes, and encodes back byte for byte") {
  const std::string bytes = CapturedMeet();
  REQUIRE(FrameLength(bytes) == std::optional<uint32_t>(2280));
  BusMessage m;
  std::string why;
  REQUIRE_MESSAGE(Decode(bytes, &m, &why), why);
  CHECK(m.type == MsgType::kMeet);
  CHECK(m.port == 27111);
  CHECK(m.cport == 37111);
  CHECK(m.current_epoch == 7);
  CHECK(m.config_epoch == 7);
  CHECK(m.offset == 0);
  CHECK(m.sender == "70e8ee48583204b6f82f25088cb33fbf7e7ca67e");
  CHECK(m.myslots.count() == 4);
  CHECK(m.myslots.test(0));
  CHECK(m.myslots.test(1));
  CHECK(m.myslots.test(5));
  CHECK(m.myslots.test(16383));
  CHECK(m.slaveof.empty());
  CHECK(m.myip.empty());
  CHECK(m.flags == (kFlagMaster | kFlagMyself));
  CHECK(m.state == 1);
  CHECK(m.mflags[0] == kMflagExtData);
  CHECK(m.gossip.empty());
  CHECK(m.hostname == "cap-host");
  CHECK(Encode(m) == bytes);
}

TEST_CASE("every message type round-trips with Redis's lengths") {
  BusMessage base;
  base.sender = std::string(40, 'a');
  base.current_epoch = 0x0102030405060708ULL;
  base.config_epoch = 3;
  base.offset = 12345;
  base.myslots.set(100);
  base.slaveof = std::string(40, 'b');
  base.myip = "10.0.0.1";
  base.port = 7000;
  base.cport = 17000;
  base.flags = kFlagSlave;

  BusMessage ping = base;
  ping.type = MsgType::kPong;
  ping.gossip.push_back(
      {std::string(40, 'c'), 5, 6, "::1", 7001, 17001, kFlagMaster | kFlagPfail, 0});
  ping.gossip.push_back({std::string(40, 'd'), 0, 9, "127.0.0.1", 7002, 17002, kFlagSlave, 0});
  BusMessage fail = base;
  fail.type = MsgType::kFail;
  fail.about = std::string(40, 'e');
  BusMessage pub = base;
  pub.type = MsgType::kPublish;
  pub.channel = "news";
  pub.message = std::string("a\0b", 3);
  BusMessage update = base;
  update.type = MsgType::kUpdate;
  update.about = std::string(40, 'f');
  update.update_config_epoch = 9;
  update.update_slots.set(0);
  update.update_slots.set(16383);
  BusMessage auth = base;
  auth.type = MsgType::kFailoverAuthRequest;
  auth.mflags[0] = kMflagForceAck;
  BusMessage ack = base;
  ack.type = MsgType::kFailoverAuthAck;
  BusMessage mf = base;
  mf.type = MsgType::kMfStart;

  const std::vector<std::pair<BusMessage, size_t>> cases = {{ping, kHeaderLen + 2 * kGossipLen},
                                                            {fail, kHeaderLen + 40},
                                                            {pub, kHeaderLen + 8 + 4 + 3},
                                                            {update, kHeaderLen + 8 + 40 + 2048},
                                                            {auth, kHeaderLen},
                                                            {ack, kHeaderLen},
                                                            {mf, kHeaderLen}};
  for (const auto& [m, len] : cases) {
    CAPTURE(MsgTypeName(static_cast<int>(m.type)));
    const std::string bytes = Encode(m);
    CHECK(bytes.size() == len);
    BusMessage back;
    std::string why;
    REQUIRE_MESSAGE(Decode(bytes, &back, &why), why);
    CHECK(back == m);
  }
}

TEST_CASE("invalid messages are refused") {
  BusMessage m;
  m.sender = std::string(40, 'a');
  std::string bytes = Encode(m);
  BusMessage out;
  std::string why;
  CHECK(FrameLength(bytes.substr(0, 7)) == std::nullopt);
  CHECK(FrameLength("XXXXxxxx") == std::optional<uint32_t>(0));
  std::string bad_sig = bytes;
  bad_sig[0] = 'X';
  CHECK_FALSE(Decode(bad_sig, &out, &why));
  std::string bad_ver = bytes;
  bad_ver[9] = 2;
  CHECK_FALSE(Decode(bad_ver, &out, &why));
  std::string short_fail = bytes;  // a FAIL without its body
  short_fail[13] = static_cast<char>(MsgType::kFail);
  CHECK_FALSE(Decode(short_fail, &out, &why));
  std::string bad_count = bytes;  // says one gossip entry, carries none
  bad_count[15] = 1;
  CHECK_FALSE(Decode(bad_count, &out, &why));
  std::string extra = bytes + std::string(8, '\0');  // totlen disagrees with the bytes
  CHECK_FALSE(Decode(extra, &out, &why));
}

}  // namespace
}  // namespace sluice::server::cluster
