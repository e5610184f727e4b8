// The Redis Cluster bus message codec (Redis 7.0's clusterMsg, protocol version 1): pure
// functions between a BusMessage and its bytes; no I/O. Layout (big-endian integers):
//   0 "RCmb" | 4 totlen u32 | 8 ver u16 | 10 port u16 | 12 type u16 | 14 count u16 |
//   16 currentEpoch u64 | 24 configEpoch u64 | 32 offset u64 | 40 sender[40] |
//   80 myslots[2048] | 2128 slaveof[40] | 2168 myip[46] | 2214 extensions u16 |
//   2216 reserved[30] | 2246 pport u16 | 2248 cport u16 | 2250 flags u16 | 2252 state u8 |
//   2253 mflags[3] | 2256 body
// Bodies: PING/PONG/MEET: `count` gossip entries of 104 bytes, then `extensions` ping
// extensions (u32 length, u16 type, u16 pad, data padded to 8 bytes; type 0 = hostname);
// FAIL: nodename[40]; PUBLISH(SHARD): channel_len u32, message_len u32, bytes; UPDATE:
// configEpoch u64, nodename[40], slots[2048]; FAILOVER_AUTH_REQUEST/ACK, MFSTART: none.
#pragma once

#include <array>
#include <bitset>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::server::cluster {

inline constexpr int kSlots = 16384;
inline constexpr size_t kNameLen = 40;      // a node id: 40 hex characters
inline constexpr size_t kIpLen = 46;        // NET_IP_STR_LEN
inline constexpr size_t kHeaderLen = 2256;  // everything before the body
inline constexpr size_t kGossipLen = 104;
inline constexpr size_t kUpdateBodyLen = 8 + kNameLen + kSlots / 8;

enum class MsgType : uint16_t {
  kPing = 0,
  kPong = 1,
  kMeet = 2,
  kFail = 3,
  kPublish = 4,
  kFailoverAuthRequest = 5,
  kFailoverAuthAck = 6,
  kUpdate = 7,
  kMfStart = 8,
  kModule = 9,
  kPublishShard = 10,
};
inline constexpr int kMsgTypeCount = 11;
// "ping", "pong", ... as CLUSTER INFO's cluster_stats_messages_<type>_sent names them.
const char* MsgTypeName(int type);

// Node flags (CLUSTER_NODE_*), as they travel in the header and gossip.
enum NodeFlag : uint16_t {
  kFlagMaster = 1,
  kFlagSlave = 2,
  kFlagPfail = 4,
  kFlagFail = 8,
  kFlagMyself = 16,
  kFlagHandshake = 32,
  kFlagNoAddr = 64,
  kFlagMeet = 128,
  kFlagMigrateTo = 256,
  kFlagNoFailover = 512,
};

// mflags[0] bits.
inline constexpr uint8_t kMflagPaused = 1;
inline constexpr uint8_t kMflagForceAck = 2;
inline constexpr uint8_t kMflagExtData = 4;

using SlotBitmap = std::bitset<kSlots>;

struct Gossip {
  std::string name;            // 40 characters
  uint32_t ping_sent = 0;      // seconds
  uint32_t pong_received = 0;  // seconds
  std::string ip;
  uint16_t port = 0;
  uint16_t cport = 0;
  uint16_t flags = 0;
  uint16_t pport = 0;
  bool operator==(const Gossip&) const = default;
};

struct BusMessage {
  MsgType type = MsgType::kPing;
  uint16_t port = 0;
  uint64_t current_epoch = 0;
  uint64_t config_epoch = 0;
  uint64_t offset = 0;
  std::string sender;  // 40 characters
  SlotBitmap myslots;
  std::string slaveof;  // "" for a master (all zero bytes on the wire)
  std::string myip;     // "" when not announced
  uint16_t pport = 0;
  uint16_t cport = 0;
  uint16_t flags = 0;
  uint8_t state = 0;  // 0 ok, 1 fail
  std::array<uint8_t, 3> mflags = {0, 0, 0};
  // PING, PONG, MEET
  std::vector<Gossip> gossip;
  std::string hostname;  // the hostname extension; "" when absent
  // FAIL: the failing node; UPDATE: the node whose slots these are
  std::string about;
  // PUBLISH, PUBLISHSHARD
  std::string channel;
  std::string message;
  // UPDATE
  uint64_t update_config_epoch = 0;
  SlotBitmap update_slots;
  bool operator==(const BusMessage&) const = default;
};

// The wire bytes of m (totlen, count, extensions and mflags' ext-data bit derived from m).
std::string Encode(const BusMessage& m);

// The total length of the message that starts `bytes`, once its first 8 bytes are there:
// nullopt while fewer are, 0 when the signature is wrong (the link must be dropped).
std::optional<uint32_t> FrameLength(std::string_view bytes);

// Decodes one whole message (bytes.size() == totlen). False, with *why set, when it is not a
// valid Redis 7.0 bus message (wrong signature or version, a length that disagrees with its
// type's body, bad extension padding); unknown types decode their header only.
bool Decode(std::string_view bytes, BusMessage* m, std::string* why);

}  // namespace sluice::server::cluster
