// Building and processing cluster bus messages (mu_ held): Redis 7.0's clusterProcessPacket,
// clusterProcessGossipSection, clusterBuildMessageHdr and clusterSendPing rules.
#include <arpa/inet.h>

#include <algorithm>
#include <random>

#include "server/cluster/bus.h"
#include "server/cluster/cluster.h"
#include "server/core/logging.h"

namespace sluice::server::cluster {

namespace {

bool ValidIp(const std::string& ip) {
  unsigned char buf[sizeof(in6_addr)];
  return inet_pton(AF_INET, ip.c_str(), buf) == 1 || inet_pton(AF_INET6, ip.c_str(), buf) == 1;
}

std::mt19937_64& Rng() {
  static thread_local std::mt19937_64 rng(std::random_device{}());
  return rng;
}

}  // namespace

BusMessage Cluster::BuildHeader(MsgType type) {
  Node* master = myself_->is_replica() && myself_->master != nullptr ? myself_->master : myself_;
  BusMessage m;
  m.type = type;
  m.sender = myself_->name;
  m.myip = settings_.announce_ip;
  m.myslots = master->slots;
  if (myself_->master != nullptr) m.slaveof = myself_->master->name;
  m.port = static_cast<uint16_t>(myself_->port);
  m.pport = static_cast<uint16_t>(myself_->pport);
  m.cport = static_cast<uint16_t>(myself_->cport);
  m.flags = myself_->flags;
  m.state = state_ok_ ? 0 : 1;
  m.current_epoch = current_epoch_;
  m.config_epoch = master->config_epoch;
  m.offset = hooks_.repl_offset ? static_cast<uint64_t>(hooks_.repl_offset()) : 0;
  if (myself_->is_master() && mf_end_ != 0) m.mflags[0] |= kMflagPaused;
  return m;
}

// clusterSendPing's body: about a tenth of the nodes (at least 3) picked at random, then every
// node in PFAIL, and the hostname extension.
BusMessage Cluster::BuildPing(MsgType type, Node* to) {
  BusMessage m = BuildHeader(type);
  m.hostname = myself_->hostname;
  std::vector<Node*> candidates;
  for (auto& [name, n] : nodes_) {
    Node* x = n.get();
    if (x == myself_ || x == to || (x->flags & (kFlagPfail | kFlagHandshake | kFlagNoAddr))) {
      continue;
    }
    if (x->link < 0 && x->numslots == 0) continue;
    candidates.push_back(x);
  }
  size_t wanted = std::max<size_t>(3, nodes_.size() / 10);
  std::shuffle(candidates.begin(), candidates.end(), Rng());
  if (candidates.size() > wanted) candidates.resize(wanted);
  for (auto& [name, n] : nodes_) {
    if ((n->flags & kFlagPfail) && !(n->flags & (kFlagHandshake | kFlagNoAddr))) {
      candidates.push_back(n.get());
    }
  }
  for (Node* x : candidates) {
    m.gossip.push_back({x->name, static_cast<uint32_t>(x->ping_sent / 1000),
                        static_cast<uint32_t>(x->pong_received / 1000), x->ip,
                        static_cast<uint16_t>(x->port), static_cast<uint16_t>(x->cport), x->flags,
                        static_cast<uint16_t>(x->pport)});
  }
  return m;
}

void Cluster::SendTo(Node* n, const BusMessage& m) {
  if (n == nullptr || n->link < 0) return;
  outbox_[n->link] += Encode(m);
  ++sent_[static_cast<int>(m.type) % kMsgTypeCount];
  if (bus_ != nullptr) bus_->WakeFromOtherThread();
}

void Cluster::Broadcast(const BusMessage& m) {
  for (auto& [name, n] : nodes_) {
    if (n.get() == myself_ || (n->flags & (kFlagHandshake | kFlagNoAddr))) continue;
    SendTo(n.get(), m);
  }
}

void Cluster::PropagatePublish(std::string_view channel, std::string_view message, bool shard) {
  std::lock_guard lock(mu_);
  BusMessage m = BuildHeader(shard ? MsgType::kPublishShard : MsgType::kPublish);
  m.channel = std::string(channel);
  m.message = std::string(message);
  if (!shard) return Broadcast(m);
  Node* master = myself_->is_master() ? myself_ : myself_->master;
  if (master == nullptr) return;
  if (master != myself_) SendTo(master, m);
  for (Node* r : master->replicas) {
    if (r != myself_) SendTo(r, m);
  }
}

bool Cluster::StartHandshake(const std::string& ip, int port, int cport) {
  if (!ValidIp(ip) || port <= 0 || port > 65535 || cport <= 0 || cport > 65535) return false;
  for (auto& [name, n] : nodes_) {
    if ((n->flags & kFlagHandshake) && n->ip == ip && n->port == port && n->cport == cport) {
      return false;
    }
  }
  Node* n = CreateNode("", kFlagHandshake | kFlagMeet);
  n->ip = ip;
  n->port = port;
  n->cport = cport;
  return true;
}

bool Cluster::UpdateAddressIfNeeded(Node* n, bool inbound_link, const std::string& peer_ip,
                                    const BusMessage& m) {
  if (n == myself_ || !inbound_link) return false;
  const std::string ip = m.myip.empty() ? peer_ip : m.myip;
  if (n->ip == ip && n->port == m.port && n->pport == m.pport && n->cport == m.cport) return false;
  n->ip = ip;
  n->port = m.port;
  n->pport = m.pport;
  n->cport = m.cport;
  CloseLink(n);
  n->flags &= ~kFlagNoAddr;
  LogInfo("Address updated for node " + n->name + ", now " + ip + ":" + std::to_string(m.port));
  if (myself_->is_replica() && myself_->master == n && hooks_.replicate) {
    deferred_.push_back([this, ip = n->ip, port = n->port] { hooks_.replicate(ip, port); });
  }
  MarkDirty();
  return true;
}

void Cluster::MarkFailingIfNeeded(Node* n) {
  const int quorum = size_ / 2 + 1;
  if (!(n->flags & kFlagPfail) || (n->flags & kFlagFail)) return;
  int failures = CountFailureReports(n);
  if (myself_->is_master()) ++failures;
  if (failures < quorum) return;
  LogInfo("Marking node " + n->name + " as failing (quorum reached).");
  n->flags &= ~kFlagPfail;
  n->flags |= kFlagFail;
  n->fail_time = NowMs();
  if (myself_->is_master()) {
    BusMessage fail = BuildHeader(MsgType::kFail);
    fail.about = n->name;
    Broadcast(fail);
  }
  MarkDirty();
}

void Cluster::ClearFailureIfNeeded(Node* n) {
  const int64_t now = NowMs();
  if (n->is_replica() || n->numslots == 0) {
    LogInfo("Clear FAIL state for node " + n->name + ": replica is reachable again.");
    n->flags &= ~kFlagFail;
    MarkDirty();
  } else if (now - n->fail_time > settings_.node_timeout_ms * 2) {
    LogInfo("Clear FAIL state for node " + n->name +
            ": is reachable again and nobody is serving its slots after some time.");
    n->flags &= ~kFlagFail;
    MarkDirty();
  }
}

void Cluster::ProcessGossip(const BusMessage& m, Node* sender) {
  const int64_t now = NowMs();
  for (const Gossip& g : m.gossip) {
    Node* n = Lookup(g.name);
    if (n != nullptr) {
      if (sender != nullptr && sender->is_master() && n != myself_) {
        if (g.flags & (kFlagFail | kFlagPfail)) {
          n->fail_reports[sender->name].time_ms = now;
          MarkFailingIfNeeded(n);
        } else {
          n->fail_reports.erase(sender->name);
        }
      }
      if (!(g.flags & (kFlagFail | kFlagPfail)) && n->ping_sent == 0 &&
          CountFailureReports(n) == 0) {
        const int64_t pong = int64_t{g.pong_received} * 1000;
        if (pong <= now + 500 && pong > n->pong_received) n->pong_received = pong;
      }
      if ((n->flags & (kFlagFail | kFlagPfail)) && !(g.flags & kFlagNoAddr) &&
          !(g.flags & (kFlagFail | kFlagPfail)) &&
          (n->ip != g.ip || n->port != g.port || n->cport != g.cport)) {
        CloseLink(n);
        n->ip = g.ip;
        n->port = g.port;
        n->pport = g.pport;
        n->cport = g.cport;
        n->flags &= ~kFlagNoAddr;
      }
    } else if (sender != nullptr && !(g.flags & kFlagNoAddr) && !blacklist_.count(g.name) &&
               g.name.find_first_not_of("0123456789abcdef") == std::string::npos) {
      // Redis 7.0 adds a node a known node gossips about under its exact id and flags (no
      // handshake: the address may already be reused); the cron then links to it.
      Node* added = CreateNode(g.name, g.flags & ~kFlagMyself);
      added->ip = g.ip;
      added->port = g.port;
      added->pport = g.pport;
      added->cport = g.cport;
      MarkDirty();
    }
  }
}

void Cluster::ProcessRoleAndSlots(Node* sender, const BusMessage& m) {
  if (m.slaveof.empty()) {
    SetNodeAsMaster(sender);
  } else {
    Node* master = Lookup(m.slaveof);
    if (sender->is_master()) {
      for (int j = 0; j < kSlots; ++j) {
        if (slots_[j] == sender) DelSlot(j);
      }
      sender->flags &= ~(kFlagMaster | kFlagMigrateTo);
      sender->flags |= kFlagSlave;
      MarkDirty();
    }
    if (master != nullptr && sender->master != master) {
      if (sender->master != nullptr) RemoveReplica(sender->master, sender);
      AddReplica(master, sender);
      sender->master = master;
      MarkDirty();
    }
  }
  Node* sender_master = sender->is_master() ? sender : sender->master;
  const bool dirty_slots = sender_master != nullptr && sender_master->slots != m.myslots;
  if (sender->is_master() && dirty_slots) UpdateSlotsConfigWith(sender, m.config_epoch, m.myslots);
  if (dirty_slots) {
    // The sender claims slots a newer configuration gave to another master: tell it.
    for (int j = 0; j < kSlots; ++j) {
      if (!m.myslots.test(j) || slots_[j] == sender || slots_[j] == nullptr) continue;
      if (slots_[j]->config_epoch > m.config_epoch) {
        BusMessage up = BuildHeader(MsgType::kUpdate);
        up.about = slots_[j]->name;
        up.update_config_epoch = slots_[j]->config_epoch;
        up.update_slots = slots_[j]->slots;
        SendTo(sender, up);
        break;
      }
    }
  }
  if (myself_->is_master() && sender->is_master() && m.config_epoch == myself_->config_epoch) {
    HandleEpochCollision(sender);
  }
}

bool Cluster::Process(int fd, bool inbound, Node* link_node, const BusMessage& m,
                      const std::string& local_ip, const std::string& peer_ip) {
  const int64_t now = NowMs();
  const int type = static_cast<int>(m.type);
  if (type < kMsgTypeCount) ++received_[type];
  if (type == drop_filter_.load(std::memory_order_relaxed)) return true;  // DEBUG's filter
  Node* sender =
      link_node != nullptr && !(link_node->flags & kFlagHandshake) ? link_node : Lookup(m.sender);
  if (sender != nullptr) sender->data_received = now;
  if (inbound && sender != nullptr && sender != myself_ && sender->inbound_link != fd) {
    // Redis's setClusterNodeToInboundClusterLink: one inbound link per node, the older one
    // (a peer that reconnected) closed.
    if (sender->inbound_link >= 0) to_close_.push_back(sender->inbound_link);
    sender->inbound_link = fd;
  }
  if (sender != nullptr && !(sender->flags & kFlagHandshake)) {
    if (m.current_epoch > current_epoch_) current_epoch_ = m.current_epoch;
    if (m.config_epoch > sender->config_epoch) {
      sender->config_epoch = m.config_epoch;
      MarkDirty();
    }
    sender->repl_offset = static_cast<int64_t>(m.offset);
    sender->repl_offset_time = now;
    if (mf_end_ != 0 && myself_->is_replica() && myself_->master == sender &&
        (m.mflags[0] & kMflagPaused) && mf_master_offset_ == -1) {
      mf_master_offset_ = sender->repl_offset;
    }
  }
  const bool ping_like =
      m.type == MsgType::kPing || m.type == MsgType::kPong || m.type == MsgType::kMeet;
  if (m.type == MsgType::kPing || m.type == MsgType::kMeet) {
    if ((m.type == MsgType::kMeet || myself_->ip.empty()) && settings_.announce_ip.empty() &&
        !local_ip.empty() && local_ip != myself_->ip) {
      myself_->ip = local_ip;
      LogInfo("IP address for this node updated to " + myself_->ip);
      MarkDirty();
    }
    if (sender == nullptr && m.type == MsgType::kMeet) {
      Node* n = CreateNode("", kFlagHandshake);
      n->ip = m.myip.empty() ? peer_ip : m.myip;
      n->port = m.port;
      n->pport = m.pport;
      n->cport = m.cport;
      MarkDirty();
      ProcessGossip(m, nullptr);
    }
    outbox_[fd] += Encode(BuildPing(MsgType::kPong, nullptr));
    ++sent_[static_cast<int>(MsgType::kPong)];
  }
  if (ping_like) {
    if (!inbound && link_node != nullptr) {
      if (link_node->flags & kFlagHandshake) {
        if (sender != nullptr) {
          UpdateAddressIfNeeded(sender, true, peer_ip, m);
          DeleteNode(link_node);
          return false;
        }
        RenameNode(link_node, m.sender);
        link_node->flags &= ~kFlagHandshake;
        link_node->flags |= m.flags & (kFlagMaster | kFlagSlave);
        LogInfo("Handshake with node " + link_node->name + " completed.");
        MarkDirty();
      } else if (link_node->name != m.sender) {
        link_node->flags |= kFlagNoAddr;
        link_node->ip.clear();
        link_node->port = link_node->pport = link_node->cport = 0;
        MarkDirty();
        return false;
      }
    }
    if (sender != nullptr) {
      sender->flags =
          static_cast<uint16_t>((sender->flags & ~kFlagNoFailover) | (m.flags & kFlagNoFailover));
    }
    if (sender != nullptr && m.type == MsgType::kPing && !(sender->flags & kFlagHandshake)) {
      UpdateAddressIfNeeded(sender, inbound, peer_ip, m);
    }
    if (!inbound && link_node != nullptr && m.type == MsgType::kPong) {
      link_node->pong_received = now;
      link_node->ping_sent = 0;
      if (link_node->flags & kFlagPfail) {
        link_node->flags &= ~kFlagPfail;
        MarkDirty();
      } else if (link_node->flags & kFlagFail) {
        ClearFailureIfNeeded(link_node);
      }
    }
    if (sender != nullptr) {
      ProcessRoleAndSlots(sender, m);
      ProcessGossip(m, sender);
      if (sender->hostname != m.hostname) {
        sender->hostname = m.hostname;
        MarkDirty();
      }
    }
  } else if (m.type == MsgType::kFail) {
    Node* failing = sender != nullptr ? Lookup(m.about) : nullptr;
    if (failing != nullptr && !(failing->flags & (kFlagFail | kFlagMyself))) {
      LogInfo("FAIL message received from " + m.sender + " about " + m.about);
      failing->flags |= kFlagFail;
      failing->fail_time = now;
      failing->flags &= ~kFlagPfail;
      MarkDirty();
    }
  } else if (m.type == MsgType::kPublish || m.type == MsgType::kPublishShard) {
    if (sender != nullptr && hooks_.publish) {
      deferred_.push_back(
          [this, ch = m.channel, msg = m.message, shard = m.type == MsgType::kPublishShard] {
            hooks_.publish(ch, msg, shard);
          });
    }
  } else if (m.type == MsgType::kFailoverAuthRequest) {
    if (sender != nullptr) ProcessFailoverAuthRequest(sender, m);
  } else if (m.type == MsgType::kFailoverAuthAck) {
    if (sender != nullptr && sender->is_master() && sender->numslots > 0 &&
        m.current_epoch >= failover_auth_epoch_) {
      ++failover_auth_count_;
    }
  } else if (m.type == MsgType::kMfStart) {
    if (sender == nullptr || sender->master != myself_) return true;
    mf_end_ = now + 5000;  // CLUSTER_MF_TIMEOUT
    mf_replica_ = sender;
    mf_master_offset_ = -1;
    // Writers wait, so that the offset this master reports (PAUSED) is the one the replica
    // must reach; released when the failover ends or times out (ResetManualFailover).
    if (hooks_.pause_writes) {
      hooks_.pause_writes(now + 5000 * 2);  // CLUSTER_MF_PAUSE_MULT
      mf_paused_ = true;
    }
    LogInfo("Manual failover requested by replica " + sender->name + ".");
    SendTo(sender, BuildPing(MsgType::kPing, sender));
  } else if (m.type == MsgType::kUpdate) {
    Node* n = sender != nullptr ? Lookup(m.about) : nullptr;
    if (n == nullptr || n->config_epoch >= m.update_config_epoch) return true;
    if (n->is_replica()) SetNodeAsMaster(n);
    n->config_epoch = m.update_config_epoch;
    MarkDirty();
    UpdateSlotsConfigWith(n, m.update_config_epoch, m.update_slots);
  }
  return true;
}

}  // namespace sluice::server::cluster
