// The cluster bus codec: see bus_message.h for the layout (Redis 7.0's cluster.h).
#include "server/cluster/bus_message.h"

#include <cstring>

namespace sluice::server::cluster {

namespace {

constexpr size_t kOffTotlen = 4, kOffVer = 8, kOffPort = 10, kOffType = 12, kOffCount = 14;
constexpr size_t kOffCurrentEpoch = 16, kOffConfigEpoch = 24, kOffOffset = 32, kOffSender = 40;
constexpr size_t kOffMyslots = 80, kOffSlaveof = 2128, kOffMyip = 2168, kOffExtensions = 2214;
constexpr size_t kOffPport = 2246, kOffCport = 2248, kOffFlags = 2250, kOffState = 2252;
constexpr size_t kOffMflags = 2253;
constexpr uint16_t kExtHostname = 0;

void Put16(std::string& out, size_t at, uint16_t v) {
  out[at] = static_cast<char>(v >> 8);
  out[at + 1] = static_cast<char>(v);
}
void Put32(std::string& out, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) out[at + i] = static_cast<char>(v >> (24 - 8 * i));
}
void Put64(std::string& out, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) out[at + i] = static_cast<char>(v >> (56 - 8 * i));
}
// Copies s into a fixed field of n bytes (zero padded; truncated to n).
void PutFixed(std::string& out, size_t at, std::string_view s, size_t n) {
  std::memcpy(&out[at], s.data(), std::min(s.size(), n));
}
void PutBitmap(std::string& out, size_t at, const SlotBitmap& b) {
  for (int j = 0; j < kSlots; ++j) {
    if (b.test(j)) out[at + j / 8] = static_cast<char>(out[at + j / 8] | (1 << (j & 7)));
  }
}

uint16_t Get16(std::string_view in, size_t at) {
  return static_cast<uint16_t>((static_cast<uint8_t>(in[at]) << 8) |
                               static_cast<uint8_t>(in[at + 1]));
}
uint32_t Get32(std::string_view in, size_t at) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | static_cast<uint8_t>(in[at + i]);
  return v;
}
uint64_t Get64(std::string_view in, size_t at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(in[at + i]);
  return v;
}
// A fixed field up to its first NUL.
std::string GetFixed(std::string_view in, size_t at, size_t n) {
  std::string_view f = in.substr(at, n);
  return std::string(f.substr(0, std::min(f.find('\0'), f.size())));
}
SlotBitmap GetBitmap(std::string_view in, size_t at) {
  SlotBitmap b;
  for (int j = 0; j < kSlots; ++j) {
    if (static_cast<uint8_t>(in[at + j / 8]) & (1 << (j & 7))) b.set(j);
  }
  return b;
}

size_t Align8(size_t n) { return (n + 7) / 8 * 8; }

void EncodeGossip(std::string& out, size_t at, const Gossip& g) {
  PutFixed(out, at, g.name, kNameLen);
  Put32(out, at + 40, g.ping_sent);
  Put32(out, at + 44, g.pong_received);
  PutFixed(out, at + 48, g.ip, kIpLen - 1);
  Put16(out, at + 94, g.port);
  Put16(out, at + 96, g.cport);
  Put16(out, at + 98, g.flags);
  Put16(out, at + 100, g.pport);
}

Gossip DecodeGossip(std::string_view in, size_t at) {
  Gossip g;
  g.name = std::string(in.substr(at, kNameLen));
  g.ping_sent = Get32(in, at + 40);
  g.pong_received = Get32(in, at + 44);
  g.ip = GetFixed(in, at + 48, kIpLen);
  g.port = Get16(in, at + 94);
  g.cport = Get16(in, at + 96);
  g.flags = Get16(in, at + 98);
  g.pport = Get16(in, at + 100);
  return g;
}

// The body of a PING/PONG/MEET: gossip then the hostname extension.
void EncodePingBody(const BusMessage& m, std::string& out) {
  size_t at = out.size();
  out.resize(at + kGossipLen * m.gossip.size());
  for (const Gossip& g : m.gossip) {
    EncodeGossip(out, at, g);
    at += kGossipLen;
  }
  if (m.hostname.empty()) return;
  const size_t len = 8 + Align8(m.hostname.size() + 1);
  out.resize(at + len);
  Put32(out, at, static_cast<uint32_t>(len));
  Put16(out, at + 4, kExtHostname);
  PutFixed(out, at + 8, m.hostname, m.hostname.size());
}

bool DecodePingBody(std::string_view in, uint16_t count, uint16_t extensions, bool ext_data,
                    BusMessage* m, std::string* why) {
  size_t at = kHeaderLen + kGossipLen * count;
  if (in.size() < at) {
    *why = "gossip section longer than the message";
    return false;
  }
  for (size_t i = 0; i < count; ++i)
    m->gossip.push_back(DecodeGossip(in, kHeaderLen + kGossipLen * i));
  if (!ext_data) extensions = 0;  // Redis reads extensions only with the ext-data flag
  for (uint16_t e = 0; e < extensions; ++e) {
    if (in.size() < at + 8) {
      *why = "extension header past the end";
      return false;
    }
    const uint32_t len = Get32(in, at);
    if (len % 8 != 0 || len < 8 || in.size() - at < len) {
      *why = "bad extension length";
      return false;
    }
    if (Get16(in, at + 4) == kExtHostname) m->hostname = GetFixed(in, at + 8, len - 8);
    at += len;
  }
  if (at != in.size()) {
    *why = "length disagrees with the gossip count and extensions";
    return false;
  }
  return true;
}

}  // namespace

const char* MsgTypeName(int type) {
  static constexpr const char* kNames[kMsgTypeCount] = {
      "ping",     "pong",   "meet",    "fail",   "publish",     "auth-req",
      "auth-ack", "update", "mfstart", "module", "publishshard"};
  return type >= 0 && type < kMsgTypeCount ? kNames[type] : "unknown";
}

std::string Encode(const BusMessage& m) {
  std::string out(kHeaderLen, '\0');
  out.replace(0, 4, "RCmb");
  Put16(out, kOffVer, 1);
  Put16(out, kOffPort, m.port);
  Put16(out, kOffType, static_cast<uint16_t>(m.type));
  Put64(out, kOffCurrentEpoch, m.current_epoch);
  Put64(out, kOffConfigEpoch, m.config_epoch);
  Put64(out, kOffOffset, m.offset);
  PutFixed(out, kOffSender, m.sender, kNameLen);
  PutBitmap(out, kOffMyslots, m.myslots);
  PutFixed(out, kOffSlaveof, m.slaveof, kNameLen);
  PutFixed(out, kOffMyip, m.myip, kIpLen - 1);
  Put16(out, kOffPport, m.pport);
  Put16(out, kOffCport, m.cport);
  Put16(out, kOffFlags, m.flags);
  out[kOffState] = static_cast<char>(m.state);
  for (int i = 0; i < 3; ++i) out[kOffMflags + i] = static_cast<char>(m.mflags[i]);
  uint16_t count = 0;
  switch (m.type) {
    case MsgType::kPing:
    case MsgType::kPong:
    case MsgType::kMeet:
      count = static_cast<uint16_t>(m.gossip.size());
      EncodePingBody(m, out);
      if (!m.hostname.empty()) {
        Put16(out, kOffExtensions, 1);
        out[kOffMflags] = static_cast<char>(out[kOffMflags] | kMflagExtData);
      } else {
        out[kOffMflags] = static_cast<char>(out[kOffMflags] & ~kMflagExtData);
      }
      break;
    case MsgType::kFail:
      out.resize(kHeaderLen + kNameLen);
      PutFixed(out, kHeaderLen, m.about, kNameLen);
      break;
    case MsgType::kPublish:
    case MsgType::kPublishShard:
      out.resize(kHeaderLen + 8);
      Put32(out, kHeaderLen, static_cast<uint32_t>(m.channel.size()));
      Put32(out, kHeaderLen + 4, static_cast<uint32_t>(m.message.size()));
      out += m.channel;
      out += m.message;
      break;
    case MsgType::kUpdate:
      out.resize(kHeaderLen + kUpdateBodyLen);
      Put64(out, kHeaderLen, m.update_config_epoch);
      PutFixed(out, kHeaderLen + 8, m.about, kNameLen);
      PutBitmap(out, kHeaderLen + 8 + kNameLen, m.update_slots);
      break;
    default:
      break;
  }
  Put16(out, kOffCount, count);
  Put32(out, kOffTotlen, static_cast<uint32_t>(out.size()));
  return out;
}

std::optional<uint32_t> FrameLength(std::string_view bytes) {
  if (bytes.size() < 8) return std::nullopt;
  if (bytes.substr(0, 4) != "RCmb") return 0;
  return Get32(bytes, kOffTotlen);
}

bool Decode(std::string_view in, BusMessage* m, std::string* why) {
  *m = BusMessage{};
  if (in.size() < kHeaderLen || in.substr(0, 4) != "RCmb") {
    *why = "not a cluster bus message";
    return false;
  }
  if (Get32(in, kOffTotlen) != in.size()) {
    *why = "totlen disagrees with the bytes";
    return false;
  }
  if (Get16(in, kOffVer) != 1) {
    *why = "unsupported protocol version";
    return false;
  }
  m->type = static_cast<MsgType>(Get16(in, kOffType));
  m->port = Get16(in, kOffPort);
  m->current_epoch = Get64(in, kOffCurrentEpoch);
  m->config_epoch = Get64(in, kOffConfigEpoch);
  m->offset = Get64(in, kOffOffset);
  m->sender = std::string(in.substr(kOffSender, kNameLen));
  m->myslots = GetBitmap(in, kOffMyslots);
  m->slaveof = GetFixed(in, kOffSlaveof, kNameLen);
  m->myip = GetFixed(in, kOffMyip, kIpLen);
  m->pport = Get16(in, kOffPport);
  m->cport = Get16(in, kOffCport);
  m->flags = Get16(in, kOffFlags);
  m->state = static_cast<uint8_t>(in[kOffState]);
  for (int i = 0; i < 3; ++i) m->mflags[i] = static_cast<uint8_t>(in[kOffMflags + i]);
  const size_t body = in.size() - kHeaderLen;
  auto expect = [&](size_t n) {
    if (body == n) return true;
    *why = std::string("bad length for a ") + MsgTypeName(static_cast<int>(m->type)) + " message";
    return false;
  };
  switch (m->type) {
    case MsgType::kPing:
    case MsgType::kPong:
    case MsgType::kMeet:
      return DecodePingBody(in, Get16(in, kOffCount), Get16(in, kOffExtensions),
                            (m->mflags[0] & kMflagExtData) != 0, m, why);
    case MsgType::kFail:
      if (!expect(kNameLen)) return false;
      m->about = std::string(in.substr(kHeaderLen, kNameLen));
      return true;
    case MsgType::kPublish:
    case MsgType::kPublishShard: {
      if (body < 8) return expect(8);
      const uint64_t clen = Get32(in, kHeaderLen), mlen = Get32(in, kHeaderLen + 4);
      if (!expect(8 + clen + mlen)) return false;
      m->channel = std::string(in.substr(kHeaderLen + 8, clen));
      m->message = std::string(in.substr(kHeaderLen + 8 + clen, mlen));
      return true;
    }
    case MsgType::kFailoverAuthRequest:
    case MsgType::kFailoverAuthAck:
    case MsgType::kMfStart:
      return expect(0);
    case MsgType::kUpdate:
      if (!expect(kUpdateBodyLen)) return false;
      m->update_config_epoch = Get64(in, kHeaderLen);
      m->about = std::string(in.substr(kHeaderLen + 8, kNameLen));
      m->update_slots = GetBitmap(in, kHeaderLen + 8 + kNameLen);
      return true;
    default:
      return true;  // unknown (or MODULE): header only, as Redis ignores them
  }
}

}  // namespace sluice::server::cluster
