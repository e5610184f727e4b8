// The cluster's node table, slot owners, epochs and the router snapshot (mu_ held unless
// stated): Redis 7.0 cluster.c's node and slot rules.
#include <sys/time.h>

#include <algorithm>
#include <random>

#include "server/cluster/bus.h"
#include "server/cluster/cluster.h"
#include "server/core/logging.h"

namespace sluice::server::cluster {

namespace {
std::atomic<Cluster*> g_instance{nullptr};
}  // namespace

Cluster* Instance() { return g_instance.load(std::memory_order_acquire); }
void SetInstance(Cluster* cluster) { g_instance.store(cluster, std::memory_order_release); }

int64_t NowMs() {
  timeval tv;
  gettimeofday(&tv, nullptr);
  return static_cast<int64_t>(tv.tv_sec) * 1000 + tv.tv_usec / 1000;
}

std::string RandomNodeName() {
  static thread_local std::mt19937_64 rng(std::random_device{}());
  static constexpr char kHex[] = "0123456789abcdef";
  std::string name(kNameLen, '0');
  for (char& c : name) c = kHex[rng() & 15];
  return name;
}

// The published slot map: what Route() answers without the lock.
struct Cluster::RouteTable {
  RouteTable() {
    owner.fill(-1);
    migrating.fill(-1);
  }
  bool ok = false;
  bool allow_reads_when_down = false;
  std::vector<ClusterNodeAddress> addresses;  // indexed by the entries below
  std::array<int16_t, kSlots> owner{};        // -1: nobody, -2: me
  std::array<int16_t, kSlots> migrating{};    // -1: not migrating
  std::bitset<kSlots> importing;
  std::bitset<kSlots> my_master;
};

Cluster::Cluster(Store& store, ClusterSettings settings, ClusterHooks hooks)
    : store_(store), settings_(std::move(settings)), hooks_(std::move(hooks)) {
  routes_ = std::make_shared<RouteTable>();
  bus_ = std::make_unique<Bus>(*this);
}

Cluster::~Cluster() { Stop(); }

bool Cluster::StateOk() const { return std::atomic_load(&routes_)->ok; }
bool Cluster::AllowReadsWhenDown() const {
  return std::atomic_load(&routes_)->allow_reads_when_down;
}

ClusterSlotRoute Cluster::Route(uint16_t slot) const {
  std::shared_ptr<const RouteTable> t = std::atomic_load(&routes_);
  ClusterSlotRoute r;
  const int16_t o = t->owner[slot];
  if (o == -2) {
    r.owner = ClusterSlotRoute::Owner::kMe;
  } else if (o >= 0) {
    r.owner = ClusterSlotRoute::Owner::kOther;
    r.owner_address = t->addresses[o];
  }
  if (t->migrating[slot] >= 0) {
    r.migrating = true;
    r.migrating_to = t->addresses[t->migrating[slot]];
  }
  r.importing = t->importing.test(slot);
  r.served_by_my_master = t->my_master.test(slot);
  return r;
}

void Cluster::Publish() {
  auto t = std::make_shared<RouteTable>();
  t->ok = state_ok_;
  t->allow_reads_when_down = settings_.allow_reads_when_down;
  std::map<const Node*, int16_t> index;
  auto address_of = [&](const Node* n) -> int16_t {
    auto [it, fresh] = index.emplace(n, static_cast<int16_t>(t->addresses.size()));
    if (fresh) {
      // With tls-cluster a node's port is its TLS one and pport its plain one (if any): plain
      // clients are sent pport where there is one, TLS clients port (Redis's use_pport).
      // Without, every client is sent port.
      // -MOVED / -ASK name the node by cluster-preferred-endpoint-type (Redis's
      // clusterRedirectClient).
      std::string endpoint = PreferredEndpoint(settings_.preferred_endpoint, n->ip, n->hostname);
      if (settings_.tls_cluster) {
        t->addresses.push_back({std::move(endpoint), n->pport != 0 ? n->pport : n->port, n->port});
      } else {
        t->addresses.push_back({std::move(endpoint), n->port, 0});
      }
    }
    return it->second;
  };
  for (int j = 0; j < kSlots; ++j) {
    const Node* o = slots_[j];
    t->owner[j] = o == nullptr ? -1 : o == myself_ ? -2 : address_of(o);
    t->migrating[j] = migrating_to_[j] != nullptr ? address_of(migrating_to_[j]) : -1;
    if (importing_from_[j] != nullptr) t->importing.set(j);
    if (o != nullptr && myself_->master == o) t->my_master.set(j);
  }
  const std::shared_ptr<const RouteTable> before = std::atomic_load(&routes_);
  bool changed = before->ok != t->ok;
  for (int j = 0; j < kSlots && !changed; ++j) {
    changed = (before->owner[j] == -2) != (t->owner[j] == -2) ||
              before->my_master.test(j) != t->my_master.test(j) ||
              before->importing.test(j) != t->importing.test(j);
  }
  std::atomic_store(&routes_, std::shared_ptr<const RouteTable>(std::move(t)));
  if (changed && hooks_.routing_changed) hooks_.routing_changed();
  if (shard_slots_lost_.any()) {
    if (hooks_.shard_slots_lost) hooks_.shard_slots_lost(shard_slots_lost_);
    shard_slots_lost_.reset();
  }
}

Node* Cluster::CreateNode(const std::string& name, uint16_t flags) {
  auto n = std::make_unique<Node>();
  n->name = name.empty() ? RandomNodeName() : name;
  n->flags = flags;
  n->ctime = NowMs();
  Node* raw = n.get();
  nodes_[raw->name] = std::move(n);
  return raw;
}

Node* Cluster::Lookup(const std::string& name) {
  auto it = nodes_.find(name);
  return it == nodes_.end() ? nullptr : it->second.get();
}

// Redis's clusterDelNode: its slots' importing/migrating marks, its failure reports on others,
// its replica/master ties, then the node and its link.
void Cluster::DeleteNode(Node* n) {
  for (int j = 0; j < kSlots; ++j) {
    if (importing_from_[j] == n) importing_from_[j] = nullptr;
    if (migrating_to_[j] == n) migrating_to_[j] = nullptr;
    if (slots_[j] == n) DelSlot(j);
  }
  for (auto& [name, other] : nodes_) other->fail_reports.erase(n->name);
  if (n->master != nullptr) RemoveReplica(n->master, n);
  for (Node* r : n->replicas) r->master = nullptr;
  CloseLink(n);
  if (n->inbound_link >= 0) to_close_.push_back(n->inbound_link);  // Redis's freeClusterNode
  n->inbound_link = -1;
  nodes_.erase(n->name);
}

void Cluster::RenameNode(Node* n, const std::string& name) {
  auto it = nodes_.find(n->name);
  std::unique_ptr<Node> owned = std::move(it->second);
  nodes_.erase(it);
  owned->name = name;
  nodes_[name] = std::move(owned);
}

bool Cluster::AddSlot(Node* n, int slot) {
  if (slots_[slot] != nullptr) return false;
  slots_[slot] = n;
  n->slots.set(slot);
  ++n->numslots;
  return true;
}

bool Cluster::DelSlot(int slot) {
  Node* n = slots_[slot];
  if (n == nullptr) return false;
  // clusterGetNodesServingMySlots: the owner's master (the owner itself when a master) and its
  // replicas.
  const Node* primary = n->is_master() || n->master == nullptr ? n : n->master;
  if (primary == myself_ || std::find(primary->replicas.begin(), primary->replicas.end(),
                                      myself_) != primary->replicas.end()) {
    shard_slots_lost_.set(slot);
  }
  n->slots.reset(slot);
  --n->numslots;
  slots_[slot] = nullptr;
  return true;
}

void Cluster::AddReplica(Node* master, Node* replica) {
  if (std::find(master->replicas.begin(), master->replicas.end(), replica) ==
      master->replicas.end()) {
    master->replicas.push_back(replica);
  }
  master->flags |= kFlagMigrateTo;
}

void Cluster::RemoveReplica(Node* master, Node* replica) {
  auto& r = master->replicas;
  r.erase(std::remove(r.begin(), r.end(), replica), r.end());
  if (r.empty()) master->flags &= ~kFlagMigrateTo;
}

void Cluster::SetNodeAsMaster(Node* n) {
  if (n->is_master()) return;
  if (n->master != nullptr) {
    RemoveReplica(n->master, n);
    if (n != myself_) n->flags |= kFlagMigrateTo;
  }
  n->flags &= ~kFlagSlave;
  n->flags |= kFlagMaster;
  n->master = nullptr;
  if (n == myself_) replicating_ = false;
  MarkDirty();
}

// clusterSetMaster: myself becomes a replica of master (its slots dropped) and replication
// starts toward it.
void Cluster::SetMyMaster(Node* master) {
  if (myself_->is_master()) {
    myself_->flags &= ~(kFlagMaster | kFlagMigrateTo);
    myself_->flags |= kFlagSlave;
    for (int j = 0; j < kSlots; ++j) {
      if (slots_[j] == myself_) DelSlot(j);
      importing_from_[j] = migrating_to_[j] = nullptr;
    }
  } else if (myself_->master != nullptr) {
    RemoveReplica(myself_->master, myself_);
  }
  myself_->master = master;
  AddReplica(master, myself_);
  // The router learns that the slots went before writers paused by a manual failover resume
  // (and before replication turns this node into a replica): they get -MOVED, not an ack that
  // the new master never sees, nor -READONLY.
  UpdateState();
  ResetManualFailover();
  MarkDirty();
  if (hooks_.replicate) {
    // Redis replicates from the master's port (its TLS one with tls-cluster); a plain link
    // (tls-replication no) to a tls-cluster master takes its plain port where it has one.
    const bool plain_link = settings_.tls_cluster && !settings_.tls.replication;
    const int port = plain_link && master->pport != 0 ? master->pport : master->port;
    replicating_ = true;
    deferred_.push_back([this, ip = master->ip, port] { hooks_.replicate(ip, port); });
  }
}

void Cluster::CloseLink(Node* n) {
  if (n->link < 0) return;
  outbox_.erase(n->link);
  to_close_.push_back(n->link);
  n->link = -1;
}

int Cluster::CountFailureReports(Node* n) {
  CleanFailureReports(n);
  return static_cast<int>(n->fail_reports.size());
}

void Cluster::CleanFailureReports(Node* n) {
  const int64_t max_age = settings_.node_timeout_ms * 2;  // CLUSTER_FAIL_REPORT_VALIDITY_MULT
  const int64_t now = NowMs();
  for (auto it = n->fail_reports.begin(); it != n->fail_reports.end();) {
    it = now - it->second.time_ms > max_age ? n->fail_reports.erase(it) : std::next(it);
  }
}

uint64_t Cluster::MaxEpoch() const {
  uint64_t max = current_epoch_;
  for (const auto& [name, n] : nodes_) max = std::max(max, n->config_epoch);
  return max;
}

// clusterBumpConfigEpochWithoutConsensus: true when myself's epoch moved.
bool Cluster::BumpEpochLocked() {
  const uint64_t max = MaxEpoch();
  if (myself_->config_epoch == 0 || myself_->config_epoch != max) {
    ++current_epoch_;
    myself_->config_epoch = current_epoch_;
    MarkDirty();
    LogInfo("New configEpoch set to " + std::to_string(myself_->config_epoch));
    return true;
  }
  return false;
}

// clusterHandleConfigEpochCollision: of two masters with one epoch the smaller id moves on.
void Cluster::HandleEpochCollision(Node* sender) {
  if (sender->config_epoch != myself_->config_epoch || !sender->is_master() ||
      !myself_->is_master()) {
    return;
  }
  if (sender->name <= myself_->name) return;
  ++current_epoch_;
  myself_->config_epoch = current_epoch_;
  MarkDirty();
  LogInfo("WARNING: configEpoch collision with node " + sender->name + ". configEpoch set to " +
          std::to_string(myself_->config_epoch));
}

// clusterUpdateSlotsConfigWith: a master's claim wins the slots whose owners have a lower
// epoch; losing my last slot makes me its replica, losing a slot with keys drops the keys.
void Cluster::UpdateSlotsConfigWith(Node* sender, uint64_t sender_epoch, const SlotBitmap& s) {
  if (sender == myself_) return;
  Node* cur_master = myself_->is_master() ? myself_ : myself_->master;
  Node* new_master = nullptr;
  std::vector<int> dirty;
  int sender_slots = 0, migrated_ours = 0;
  for (int j = 0; j < kSlots; ++j) {
    if (!s.test(j)) continue;
    ++sender_slots;
    if (slots_[j] == sender || importing_from_[j] != nullptr) continue;
    if (slots_[j] == nullptr || slots_[j]->config_epoch < sender_epoch) {
      if (slots_[j] == myself_) dirty.push_back(j);
      if (slots_[j] == cur_master && cur_master != nullptr) {
        new_master = sender;
        ++migrated_ours;
      }
      DelSlot(j);
      AddSlot(sender, j);
      MarkDirty();
    }
  }
  // A master left without slots follows their new owner (a failover took them) unless
  // cluster-allow-replica-migration is no and only some of the sender's slots were ours (a
  // rebalance emptied it: it keeps its replicas, as Redis 7.0).
  if (new_master != nullptr && cur_master->numslots == 0 &&
      (settings_.allow_replica_migration || sender_slots == migrated_ours)) {
    LogInfo("Configuration change detected. Reconfiguring myself as a replica of " + sender->name);
    SetMyMaster(sender);
  } else if (myself_->master != nullptr && myself_->master->master != nullptr &&
             myself_->master->master != myself_) {
    // A replica of a master that turned replica: follow the grandmaster (no sub-replicas).
    LogInfo("I'm a sub-replica! Reconfiguring myself as a replica of grandmaster " +
            myself_->master->master->name);
    SetMyMaster(myself_->master->master);
  } else {
    for (int j : dirty) {
      auto n = store_.CountKeysInSlot(0, static_cast<uint16_t>(j));
      if (n.ok() && *n > 0) (void)store_.DeleteKeysInSlot(0, static_cast<uint16_t>(j));
    }
  }
}

// clusterUpdateState: ok when every slot is served by a reachable master (or coverage is not
// required) and myself is in the majority partition.
void Cluster::UpdateState() {
  const int64_t now = NowMs();
  bool ok = true;
  if (settings_.require_full_coverage) {
    for (int j = 0; j < kSlots; ++j) {
      if (slots_[j] == nullptr || (slots_[j]->flags & kFlagFail)) {
        ok = false;
        break;
      }
    }
  }
  int size = 0, reachable = 0;
  for (const auto& [name, n] : nodes_) {
    if (n->is_master() && n->numslots > 0) {
      ++size;
      if (!(n->flags & (kFlagFail | kFlagPfail))) ++reachable;
    }
  }
  size_ = size;
  const int quorum = size / 2 + 1;
  if (reachable < quorum) {
    ok = false;
    among_minority_since_ = now;
  }
  if (ok != state_ok_) {
    // Rejoining after a minority partition waits, as Redis does (CLUSTER_WRITABLE_DELAY).
    const int64_t rejoin_delay = std::clamp<int64_t>(settings_.node_timeout_ms, 500, 5000);
    if (ok && myself_->is_master() && among_minority_since_ != 0 &&
        now - among_minority_since_ < rejoin_delay) {
      Publish();
      return;
    }
    LogInfo(std::string("Cluster state changed: ") + (ok ? "ok" : "fail"));
    state_ok_ = ok;
  }
  Publish();
}

std::vector<std::pair<int, int>> Cluster::RangesOf(const Node* n) const {
  std::vector<std::pair<int, int>> ranges;
  for (int j = 0; j < kSlots;) {
    if (slots_[j] != n) {
      ++j;
      continue;
    }
    int end = j;
    while (end + 1 < kSlots && slots_[end + 1] == n) ++end;
    ranges.emplace_back(j, end);
    j = end + 1;
  }
  return ranges;
}

std::string Cluster::Description(const Node* n, bool plain_client) const {
  const int port = plain_client && n->pport != 0 ? n->pport : n->port;
  std::string s =
      n->name + " " + n->ip + ":" + std::to_string(port) + "@" + std::to_string(n->cport);
  if (!n->hostname.empty()) s += "," + n->hostname;
  s += " ";
  static constexpr std::pair<uint16_t, const char*> kNames[] = {
      {kFlagMyself, "myself"}, {kFlagMaster, "master"},
      {kFlagSlave, "slave"},   {kFlagPfail, "fail?"},
      {kFlagFail, "fail"},     {kFlagHandshake, "handshake"},
      {kFlagNoAddr, "noaddr"}, {kFlagNoFailover, "nofailover"}};
  std::string flags;
  for (const auto& [bit, name] : kNames) {
    if (n->flags & bit) flags += (flags.empty() ? "" : ",") + std::string(name);
  }
  s += flags.empty() ? "noflags" : flags;
  s += " " + (n->master != nullptr ? n->master->name : std::string("-"));
  const uint64_t epoch =
      n->is_replica() && n->master != nullptr ? n->master->config_epoch : n->config_epoch;
  s += " " + std::to_string(n->ping_sent) + " " + std::to_string(n->pong_received) + " " +
       std::to_string(epoch) + " " +
       ((n->link >= 0 || (n->flags & kFlagMyself)) ? "connected" : "disconnected");
  for (const auto& [start, end] : RangesOf(n)) {
    s += " " + std::to_string(start) + (end == start ? "" : "-" + std::to_string(end));
  }
  if (n == myself_) {
    for (int j = 0; j < kSlots; ++j) {
      if (migrating_to_[j] != nullptr) {
        s += " [" + std::to_string(j) + "->-" + migrating_to_[j]->name + "]";
      } else if (importing_from_[j] != nullptr) {
        s += " [" + std::to_string(j) + "-<-" + importing_from_[j]->name + "]";
      }
    }
  }
  return s;
}

}  // namespace sluice::server::cluster
