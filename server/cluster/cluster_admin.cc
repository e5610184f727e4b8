// The CLUSTER subcommands' effects on the cluster state (Redis 7.0.15's clusterCommand rules);
// server/commands/cmd_cluster*.cc parse the arguments and write the replies.
#include <unistd.h>

#include <cstring>

#include "server/cluster/bus.h"
#include "server/cluster/cluster.h"
#include "server/core/config.h"
#include "server/core/config_compat.h"
#include "server/core/errors_cluster.h"
#include "server/core/logging.h"

namespace sluice::server::cluster {

namespace {

std::string Compat(const Config& config, const char* name) {
  const CompatOption* option = FindCompatOption(name);
  return option == nullptr ? "" : GetCompatValue(config, *option);
}

int64_t CompatInt(const Config& config, const char* name) {
  return std::strtoll(Compat(config, name).c_str(), nullptr, 10);
}

}  // namespace

ClusterSettings ClusterSettings::From(const Config& config) {
  ClusterSettings s;
  s.config_file = Compat(config, "cluster-config-file");
  s.dir = config.dir;
  s.node_timeout_ms = CompatInt(config, "cluster-node-timeout");
  s.port = config.port;
  s.tls_port = config.tls.port;
  s.tls_cluster = config.tls.cluster;
  s.tls = config.tls;
  const int64_t cport = CompatInt(config, "cluster-port");
  const int base = s.tls_cluster ? config.tls.port : config.port;
  s.bus_port = cport != 0 ? static_cast<int>(cport) : base + 10000;
  s.bind = config.bind;
  s.announce_ip = Compat(config, "cluster-announce-ip");
  s.announce_hostname = Compat(config, "cluster-announce-hostname");
  s.announce_port = static_cast<int>(CompatInt(config, "cluster-announce-port"));
  s.announce_tls_port = static_cast<int>(CompatInt(config, "cluster-announce-tls-port"));
  s.announce_bus_port = static_cast<int>(CompatInt(config, "cluster-announce-bus-port"));
  s.require_full_coverage = Compat(config, "cluster-require-full-coverage") == "yes";
  s.allow_reads_when_down = Compat(config, "cluster-allow-reads-when-down") == "yes";
  s.replica_validity_factor = CompatInt(config, "cluster-replica-validity-factor");
  s.migration_barrier = CompatInt(config, "cluster-migration-barrier");
  s.replica_no_failover = Compat(config, "cluster-replica-no-failover") == "yes";
  s.allow_replica_migration = Compat(config, "cluster-allow-replica-migration") == "yes";
  s.repl_ping_replica_period_s = config.repl_ping_replica_period;
  s.link_sendbuf_limit =
      std::strtoull(Compat(config, "cluster-link-sendbuf-limit").c_str(), nullptr, 10);
  s.preferred_endpoint = ParseEndpointType(Compat(config, "cluster-preferred-endpoint-type"));
  return s;
}

void ClusterSettings::AnnouncedPorts(int* announced_port, int* announced_pport,
                                     int* announced_cport) const {
  *announced_port = tls_cluster ? tls_port : port;
  *announced_pport = tls_cluster ? port : 0;
  *announced_cport = bus_port;
  if (tls_cluster && announce_tls_port != 0) {
    *announced_port = announce_tls_port;
    *announced_pport = announce_port;
  } else if (announce_port != 0) {
    *announced_port = announce_port;
  }
  if (announce_bus_port != 0) *announced_cport = announce_bus_port;
}

void Cluster::ReloadTls(const TlsConfig& tls) {
  std::lock_guard lock(mu_);
  if (!settings_.tls_cluster) return;
  settings_.tls = tls;
  tls_reload_ = true;
}

std::string Cluster::Start() {
  if (std::string why = bus_->Listen(); !why.empty()) return why;
  bus_->Start();
  return "";
}

void Cluster::Stop() {
  if (bus_ != nullptr) bus_->Stop();
  std::lock_guard lock(mu_);
  if (myself_ != nullptr) SaveIfDirty();
}

std::string Cluster::MyId() {
  std::lock_guard lock(mu_);
  return myself_->name;
}

std::string Cluster::NodesText(bool plain_client) {
  std::lock_guard lock(mu_);
  std::string text;
  for (const auto& [name, n] : nodes_) text += Description(n.get(), plain_client) + "\n";
  return text;
}

std::string Cluster::InfoText() {
  std::lock_guard lock(mu_);
  int assigned = 0, ok = 0, pfail = 0, fail = 0;
  for (Node* n : slots_) {
    if (n == nullptr) continue;
    ++assigned;
    if (n->flags & kFlagFail) {
      ++fail;
    } else if (n->flags & kFlagPfail) {
      ++pfail;
    } else {
      ++ok;
    }
  }
  const uint64_t my_epoch = myself_->is_replica() && myself_->master != nullptr
                                ? myself_->master->config_epoch
                                : myself_->config_epoch;
  std::string s = std::string("cluster_state:") + (state_ok_ ? "ok" : "fail") + "\r\n";
  s += "cluster_slots_assigned:" + std::to_string(assigned) + "\r\n";
  s += "cluster_slots_ok:" + std::to_string(ok) + "\r\n";
  s += "cluster_slots_pfail:" + std::to_string(pfail) + "\r\n";
  s += "cluster_slots_fail:" + std::to_string(fail) + "\r\n";
  s += "cluster_known_nodes:" + std::to_string(nodes_.size()) + "\r\n";
  s += "cluster_size:" + std::to_string(size_) + "\r\n";
  s += "cluster_current_epoch:" + std::to_string(current_epoch_) + "\r\n";
  s += "cluster_my_epoch:" + std::to_string(my_epoch) + "\r\n";
  int64_t total = 0;
  for (int i = 0; i < kMsgTypeCount; ++i) {
    if (sent_[i] == 0) continue;
    total += sent_[i];
    s += std::string("cluster_stats_messages_") + MsgTypeName(i) +
         "_sent:" + std::to_string(sent_[i]) + "\r\n";
  }
  s += "cluster_stats_messages_sent:" + std::to_string(total) + "\r\n";
  total = 0;
  for (int i = 0; i < kMsgTypeCount; ++i) {
    if (received_[i] == 0) continue;
    total += received_[i];
    s += std::string("cluster_stats_messages_") + MsgTypeName(i) +
         "_received:" + std::to_string(received_[i]) + "\r\n";
  }
  s += "cluster_stats_messages_received:" + std::to_string(total) + "\r\n";
  s += "total_cluster_links_buffer_limit_exceeded:" + std::to_string(links_buffer_limit_exceeded_) +
       "\r\n";
  return s;
}

Status Cluster::Meet(const std::string& ip, int port, int cport) {
  std::lock_guard lock(mu_);
  if (!StartHandshake(ip, port, cport)) {
    // Redis answers the same for an invalid address and a handshake already under way
    // (errno EINVAL then); ValidIp failing is the only case a client can see.
    bool in_progress = false;
    for (auto& [name, n] : nodes_) {
      in_progress |= (n->flags & kFlagHandshake) && n->ip == ip && n->port == port;
    }
    if (!in_progress) {
      return InvalidNodeAddress(ip, std::to_string(port));
    }
  }
  return Status::Ok();
}

Status Cluster::AssignSlots(const std::vector<std::pair<int, int>>& ranges, bool del) {
  std::lock_guard lock(mu_);
  std::vector<uint8_t> seen(kSlots, 0);
  for (const auto& [start, end] : ranges) {
    for (int j = start; j <= end; ++j) {
      if (del && slots_[j] == nullptr) return SlotAlreadyUnassigned(j);
      if (!del && slots_[j] != nullptr) return SlotAlreadyBusy(j);
      if (seen[j]++ == 1) return SlotSpecifiedTwice(j);
    }
  }
  for (const auto& [start, end] : ranges) {
    for (int j = start; j <= end; ++j) {
      if (del) {
        DelSlot(j);
      } else {
        if (importing_from_[j] == myself_) importing_from_[j] = nullptr;
        AddSlot(myself_, j);
      }
    }
  }
  MarkDirty();
  UpdateState();
  SaveIfDirty();
  return Status::Ok();
}

Status Cluster::FlushSlots() {
  if (hooks_.keyspace_empty && !hooks_.keyspace_empty()) return FlushSlotsNotEmpty();
  std::lock_guard lock(mu_);
  for (int j = 0; j < kSlots; ++j) {
    if (slots_[j] == myself_) DelSlot(j);
  }
  MarkDirty();
  UpdateState();
  SaveIfDirty();
  return Status::Ok();
}

Status Cluster::SetSlot(int slot, const std::string& how, const std::string& node_id) {
  std::lock_guard lock(mu_);
  if (myself_->is_replica()) return SetSlotOnReplica();
  Node* n = node_id.empty() ? nullptr : Lookup(node_id);
  auto keys_in_slot = [&] {
    auto c = store_.CountKeysInSlot(0, static_cast<uint16_t>(slot));
    return c.ok() ? *c : 0;
  };
  if (how == "migrating") {
    if (slots_[slot] != myself_) return NotSlotOwner(slot);
    if (n == nullptr) return UnknownNodeAbout(node_id);
    if (n->is_replica()) return TargetNotMaster();
    migrating_to_[slot] = n;
  } else if (how == "importing") {
    if (slots_[slot] == myself_) return AlreadySlotOwner(slot);
    if (n == nullptr) return UnknownNodeAbout(node_id);
    if (n->is_replica()) return TargetNotMaster();
    importing_from_[slot] = n;
  } else if (how == "stable") {
    importing_from_[slot] = migrating_to_[slot] = nullptr;
  } else if (how == "node") {
    if (n == nullptr) return UnknownNode(node_id);
    if (n->is_replica()) return TargetNotMaster();
    if (slots_[slot] == myself_ && n != myself_ && keys_in_slot() != 0) return SlotHasKeys(slot);
    if (migrating_to_[slot] != nullptr && keys_in_slot() == 0) migrating_to_[slot] = nullptr;
    const bool was_mine = slots_[slot] == myself_;
    DelSlot(slot);
    AddSlot(n, slot);
    if (was_mine && n != myself_ && myself_->numslots == 0 && settings_.allow_replica_migration) {
      LogInfo("Configuration change detected. Reconfiguring myself as a replica of " + n->name);
      SetMyMaster(n);
    }
    if (n == myself_ && importing_from_[slot] != nullptr) {
      BumpEpochLocked();
      importing_from_[slot] = nullptr;
      Broadcast(BuildPing(MsgType::kPong, nullptr));
    }
  } else {
    return InvalidSetSlotAction();
  }
  MarkDirty();
  UpdateState();
  SaveIfDirty();
  return Status::Ok();
}

Status Cluster::Forget(const std::string& node_id) {
  std::lock_guard lock(mu_);
  Node* n = Lookup(node_id);
  if (n == nullptr) return UnknownNode(node_id);
  if (n == myself_) return ForgetMyself();
  if (myself_->is_replica() && myself_->master == n) return ForgetMyMaster();
  blacklist_[n->name] = NowMs() + 60000;  // CLUSTER_BLACKLIST_TTL
  DeleteNode(n);
  MarkDirty();
  UpdateState();
  SaveIfDirty();
  return Status::Ok();
}

Status Cluster::Replicate(const std::string& node_id) {
  const bool empty = !hooks_.keyspace_empty || hooks_.keyspace_empty();
  std::lock_guard lock(mu_);
  Node* n = Lookup(node_id);
  if (n == nullptr) return UnknownNode(node_id);
  if (n == myself_) return ReplicateMyself();
  if (n->is_replica()) return ReplicateReplica();
  if (myself_->is_master() && (myself_->numslots != 0 || !empty)) return ReplicateNotEmpty();
  SetMyMaster(n);
  UpdateState();
  SaveIfDirty();
  return Status::Ok();
}

Status Cluster::Replicas(const std::string& node_id, bool plain_client,
                         std::vector<std::string>* lines) {
  std::lock_guard lock(mu_);
  Node* n = Lookup(node_id);
  if (n == nullptr) return UnknownNode(node_id);
  if (n->is_replica()) return NotAMaster();
  for (Node* r : n->replicas) lines->push_back(Description(r, plain_client));
  return Status::Ok();
}

Status Cluster::FailureReports(const std::string& node_id, int64_t* count) {
  std::lock_guard lock(mu_);
  Node* n = Lookup(node_id);
  if (n == nullptr) return UnknownNode(node_id);
  *count = CountFailureReports(n);
  return Status::Ok();
}

Status Cluster::SetConfigEpoch(int64_t epoch) {
  std::lock_guard lock(mu_);
  if (epoch < 0) return InvalidConfigEpoch(epoch);
  if (nodes_.size() > 1) return ConfigEpochOthersKnown();
  if (myself_->config_epoch != 0) return ConfigEpochNonZero();
  myself_->config_epoch = static_cast<uint64_t>(epoch);
  LogInfo("configEpoch set to " + std::to_string(epoch) + " via CLUSTER SET-CONFIG-EPOCH");
  if (current_epoch_ < static_cast<uint64_t>(epoch)) current_epoch_ = static_cast<uint64_t>(epoch);
  MarkDirty();
  UpdateState();
  SaveIfDirty();
  return Status::Ok();
}

Status Cluster::BumpEpoch(bool* bumped, uint64_t* epoch) {
  std::lock_guard lock(mu_);
  *bumped = BumpEpochLocked();
  *epoch = myself_->config_epoch;
  SaveIfDirty();
  return Status::Ok();
}

Status Cluster::SaveConfig() {
  std::lock_guard lock(mu_);
  if (int err = SaveLocked(); err != 0) return SaveConfigFailed(std::strerror(err));
  return Status::Ok();
}

Status Cluster::Failover(const std::string& mode) {
  std::lock_guard lock(mu_);
  const bool takeover = mode == "takeover", force = takeover || mode == "force";
  if (myself_->is_master()) return FailoverOnMaster();
  if (myself_->master == nullptr) return FailoverMasterUnknown();
  if (!force && ((myself_->master->flags & kFlagFail) || myself_->master->link < 0)) {
    return FailoverMasterDown();
  }
  ResetManualFailover();
  mf_end_ = NowMs() + 5000;
  if (takeover) {
    LogInfo("Taking over the master (user request).");
    BumpEpochLocked();
    FailoverReplaceMaster();
  } else if (force) {
    LogInfo("Forced failover user request accepted.");
    mf_can_start_ = true;
  } else {
    LogInfo("Manual failover user request accepted.");
    SendTo(myself_->master, BuildHeader(MsgType::kMfStart));
  }
  return Status::Ok();
}

// clusterReset: slots dropped, every other node forgotten; HARD also renames myself and zeroes
// the epochs.
Status Cluster::Reset(bool hard) {
  const bool empty = !hooks_.keyspace_empty || hooks_.keyspace_empty();
  std::lock_guard lock(mu_);
  if (myself_->is_master() && !empty) return ResetWithKeys();
  if (myself_->is_replica()) {
    SetNodeAsMaster(myself_);
    if (hooks_.promote) deferred_.push_back([this] { hooks_.promote(); });
  }
  for (int j = 0; j < kSlots; ++j) {
    importing_from_[j] = migrating_to_[j] = nullptr;
    DelSlot(j);
  }
  ResetManualFailover();
  std::vector<Node*> others;
  for (auto& [name, n] : nodes_) {
    if (n.get() != myself_) others.push_back(n.get());
  }
  for (Node* n : others) DeleteNode(n);
  if (hard) {
    current_epoch_ = last_vote_epoch_ = 0;
    myself_->config_epoch = 0;
    const std::string old = myself_->name;
    RenameNode(myself_, RandomNodeName());
    LogInfo("Node hard reset, now I'm " + myself_->name);
  }
  MarkDirty();
  UpdateState();
  SaveIfDirty();
  return Status::Ok();
}

std::vector<Cluster::LinkInfo> Cluster::Links() {
  std::lock_guard lock(mu_);
  std::vector<LinkInfo> out;
  // Redis's addReplyClusterLinksDescription: per node, its outbound link ("to") then its
  // inbound one ("from"); links not tied to a node yet are not shown.
  auto add = [&](int fd, const Node* n, const char* dir) {
    auto link = bus_->links().find(fd);
    if (fd < 0 || link == bus_->links().end()) return;
    LinkInfo info;
    info.dir = dir;
    info.node = n->name;
    info.create_time = link->second.ctime;
    auto it = outbox_.find(fd);
    info.send_buffer_used = it == outbox_.end() ? 0 : static_cast<int64_t>(it->second.size());
    info.send_buffer_allocated = info.send_buffer_used;
    info.events = info.send_buffer_used > 0 ? "rw" : "r";
    out.push_back(info);
  };
  for (const auto& [name, n] : nodes_) {
    if (n.get() == myself_) continue;
    add(n->link, n.get(), "to");
    add(n->inbound_link, n.get(), "from");
  }
  return out;
}

}  // namespace sluice::server::cluster
