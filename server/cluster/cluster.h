// server/cluster: Redis Cluster mode. This node's view of the cluster (nodes, epochs, slot
// owners, migrating/importing slots, failure reports), kept current by the cluster bus (Redis
// 7.0's own protocol: bus_message.h), persisted in nodes.conf (Redis's format), and asked by the
// dispatcher through ClusterRouter (server/core/cluster_router.h).
//
// Thread-safety: one mutex (mu_) guards all state. The bus thread (bus.cc) takes it to process
// a message or run the cron; CLUSTER commands take it through the public methods. Route(),
// StateOk() and AllowReadsWhenDown() read an immutable snapshot published after every change
// (no lock), so the I/O threads never wait for the bus.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/cluster/bus_message.h"
#include "server/core/cluster_router.h"
#include "server/core/tls_config.h"
#include "sluice/status.h"
#include "sluice/store.h"

namespace sluice::server {
struct Config;
}

namespace sluice::server::cluster {

// cluster-* parameters (read from the config at start; the ones Redis lets CONFIG SET change
// are re-read by the cron through ClusterHooks::settings: RefreshSettings).
// cluster-preferred-endpoint-type: what CLUSTER SLOTS, SHARDS' "endpoint" and -MOVED/-ASK show
// for a node (Redis's getPreferredEndpoint).
enum class EndpointType { kIp, kHostname, kUnknown };
EndpointType ParseEndpointType(const std::string& value);  // "ip", "hostname", "unknown-endpoint"
// The node's ip; its hostname, "?" when it has none; "" for unknown-endpoint.
std::string PreferredEndpoint(EndpointType type, const std::string& ip,
                              const std::string& hostname);

struct ClusterSettings {
  std::string config_file = "nodes.conf";  // relative to dir
  std::string dir = ".";
  int64_t node_timeout_ms = 15000;
  int port = 6379;  // the client port
  int tls_port = 0;
  // cluster-port, or 10000 above the client port (the tls-port when tls-cluster is yes, as
  // Redis).
  int bus_port = 16379;
  // tls-cluster: every bus link speaks TLS (the contexts built from `tls` when the bus starts),
  // and "the" port this node announces is its tls-port (the plain one goes as pport).
  bool tls_cluster = false;
  TlsConfig tls;
  std::vector<std::string> bind = {"127.0.0.1"};
  std::string announce_ip, announce_hostname;
  int announce_port = 0, announce_tls_port = 0, announce_bus_port = 0;
  bool require_full_coverage = true;
  bool allow_reads_when_down = false;
  int64_t replica_validity_factor = 10;
  int64_t migration_barrier = 1;
  bool allow_replica_migration = true;
  bool replica_no_failover = false;
  int64_t repl_ping_replica_period_s = 10;  // repl-ping-replica-period (the validity check)
  EndpointType preferred_endpoint = EndpointType::kIp;  // cluster-preferred-endpoint-type
  // cluster-link-sendbuf-limit (bytes, 0: none): an outbound link whose unsent bytes pass it is
  // closed by the cron (and made again), as Redis's clusterNodeCronFreeLinkOnBufferLimitReached.
  uint64_t link_sendbuf_limit = 0;
  static ClusterSettings From(const Config& config);
  // The ports this node announces (Redis's deriveAnnouncedPorts): port is the tls-port when
  // tls-cluster is yes (pport then the plain port), else the plain port (pport 0); the
  // cluster-announce-* options override them.
  void AnnouncedPorts(int* port, int* pport, int* cport) const;
};

struct FailReport {
  int64_t time_ms = 0;
};

struct Node {
  std::string name;
  int64_t ctime = 0;
  uint16_t flags = 0;
  uint64_t config_epoch = 0;
  SlotBitmap slots;
  int numslots = 0;
  Node* master = nullptr;
  std::vector<Node*> replicas;
  int64_t orphaned_time = 0;  // since when this master has had no working replica (ms), or 0
  int64_t ping_sent = 0, pong_received = 0, data_received = 0, fail_time = 0, voted_time = 0;
  int64_t repl_offset = 0, repl_offset_time = 0;
  std::string ip, hostname;
  int port = 0, pport = 0, cport = 0;
  int link = -1;           // the outbound link's fd, -1 when none
  int64_t link_ctime = 0;  // when that link was created (ms)
  // The link this node opened to us, once a message on it named the node (Redis's
  // inbound_link, set by getNodeFromLinkAndMsg): its fd, -1 when none. The bus clears it when
  // it closes that fd.
  int inbound_link = -1;
  std::map<std::string, FailReport> fail_reports;  // reporter's name -> last report
  bool is_master() const { return (flags & kFlagMaster) != 0; }
  bool is_replica() const { return (flags & kFlagSlave) != 0; }
};

// What the bus needs from the rest of the server: replication and the store. Set by main.cc.
struct ClusterHooks {
  std::function<void(const std::string& host, int port)> replicate;  // REPLICAOF host port
  std::function<void()> promote;                                     // REPLICAOF NO ONE
  std::function<int64_t()> repl_offset;  // master_repl_offset, or a replica's processed one
  // db 0 empty (CLUSTER FLUSHSLOTS, REPLICATE, RESET: Redis looks at db 0 only).
  std::function<bool()> keyspace_empty;
  // A PUBLISH (shard: SPUBLISH) another node propagated: delivered to local subscribers.
  std::function<void(const std::string& channel, const std::string& message, bool shard)> publish;
  // A replica's time without data from its master (ms): since the link's last read while it is
  // up, since it went down otherwise; 0 when unknown. Redis's data_age (the validity check).
  std::function<int64_t()> master_data_age_ms;
  // A master during a manual failover: writers wait until `until_ms` (real ms since the epoch),
  // 0: they go on (Redis's pauseClients(PAUSE_DURING_FAILOVER, ..., CLUSTER_PAUSE_WRITE)).
  std::function<void(int64_t until_ms)> pause_writes;
  // Slots this node (or its master: this node's shard) stopped serving: their shard channels'
  // subscribers are unsubscribed (Redis's removeChannelsInSlot). Called with the cluster's
  // lock held; must not call back into the Cluster.
  std::function<void(const SlotBitmap& slots)> shard_slots_lost;
  // The slots this node serves (as their owner or its master's replica) or the cluster's state
  // changed: parked blocking commands are checked again (Redis's
  // clusterRedirectBlockedClientIfNeeded). Called with the cluster's lock held; must only post
  // work.
  std::function<void()> routing_changed;
  // The current configuration's cluster-* parameters (CONFIG SET changes them at run time).
  std::function<ClusterSettings()> settings;
};

class Cluster final : public ClusterRouter {
 public:
  Cluster(Store& store, ClusterSettings settings, ClusterHooks hooks);
  ~Cluster() override;
  // Loads nodes.conf (or creates myself and writes it). "" on success, else why not.
  std::string Load();
  // Starts the bus thread (listening on bus_port). "" on success.
  std::string Start();
  void Stop();

  // CONFIG SET changed the configuration: the run-time cluster-* parameters are read again and
  // the routing snapshot republished now (the cron would within 100 ms), so the next reply
  // already follows them. Any thread.
  void ApplySettings();

  // ClusterRouter
  bool StateOk() const override;
  bool AllowReadsWhenDown() const override;
  ClusterSlotRoute Route(uint16_t slot) const override;

  // ---- CLUSTER subcommands (cluster_admin.cc): each returns OK or Redis's error
  // (server/core/errors_cluster.h) and fills its out-parameters with what the reply needs.
  std::string MyId();
  std::string InfoText();
  // `plain_client`: the asking client is not TLS while tls-cluster is yes, so it is shown each
  // node's plain port (pport) where the node has one (Redis's use_pport).
  std::string NodesText(bool plain_client);
  bool tls_cluster() const { return settings_.tls_cluster; }
  // CONFIG SET of a tls-* file or context option: the bus builds its TLS contexts again from
  // `tls` for the links made from now on (open links keep theirs; on failure, logged, the old
  // ones stay). Any thread.
  void ReloadTls(const TlsConfig& tls);
  Status Meet(const std::string& ip, int port, int cport);
  // ADDSLOTS(RANGE) / DELSLOTS(RANGE): inclusive ranges, each start <= end, all checked
  // before any is applied.
  Status AssignSlots(const std::vector<std::pair<int, int>>& ranges, bool del);
  Status FlushSlots();
  Status SetSlot(int slot, const std::string& how, const std::string& node_id);
  Status Forget(const std::string& node_id);
  Status Replicate(const std::string& node_id);
  Status Replicas(const std::string& node_id, bool plain_client, std::vector<std::string>* lines);
  Status Reset(bool hard);
  Status SetConfigEpoch(int64_t epoch);
  Status BumpEpoch(bool* bumped, uint64_t* epoch);
  Status SaveConfig();
  Status FailureReports(const std::string& node_id, int64_t* count);
  Status Failover(const std::string& mode);
  // CLUSTER SLOTS / SHARDS material: one entry per slot range of a master.
  struct SlotRange {
    int start = 0, end = 0;
    struct Member {
      std::string name, ip, hostname;
      int port = 0;  // the port the asking client uses (CLUSTER SLOTS)
      // CLUSTER SHARDS's "port" and "tls-port" (0: not shown), by tls-cluster alone, as Redis.
      int plain_port = 0, tls_port = 0;
      bool master = false, fail = false;
      int64_t offset = 0;
      EndpointType endpoint_type = EndpointType::kIp;  // cluster-preferred-endpoint-type
      std::string endpoint;                            // PreferredEndpoint
    };
    std::vector<Member> members;  // the master first, then its replicas
  };
  std::vector<SlotRange> SlotRanges(bool plain_client);
  struct Shard {
    std::vector<std::pair<int, int>> slots;
    std::vector<SlotRange::Member> members;
  };
  std::vector<Shard> Shards();
  struct LinkInfo {
    std::string dir, node;
    int64_t create_time = 0;
    std::string events;
    int64_t send_buffer_allocated = 0, send_buffer_used = 0;
  };
  std::vector<LinkInfo> Links();
  // PUBLISH goes to every node, SPUBLISH to the other nodes of this node's shard (its master and
  // replicas), as Redis's clusterPropagatePublish. Any thread.
  void PropagatePublish(std::string_view channel, std::string_view message, bool shard);
  // DEBUG DROP-CLUSTER-PACKET-FILTER: bus messages of this type are dropped unprocessed (-1:
  // none). Any thread.
  void SetDropPacketFilter(int64_t type) { drop_filter_.store(type, std::memory_order_relaxed); }
  Store& store() { return store_; }

 private:
  friend class Bus;
  friend class NodesConf;
  // ---- cluster_state.cc (mu_ held)
  Node* CreateNode(const std::string& name, uint16_t flags);
  Node* Lookup(const std::string& name);
  void DeleteNode(Node* n);
  void RenameNode(Node* n, const std::string& name);
  bool AddSlot(Node* n, int slot);
  // Also marks the slot in shard_slots_lost_ when its owner's shard is mine (Redis's
  // clusterDelSlot); Publish hands the marks to hooks_.shard_slots_lost.
  bool DelSlot(int slot);
  void SetNodeAsMaster(Node* n);
  void SetMyMaster(Node* master);
  void AddReplica(Node* master, Node* replica);
  void RemoveReplica(Node* master, Node* replica);
  int CountFailureReports(Node* n);
  void CleanFailureReports(Node* n);
  void UpdateState();  // cluster_state:ok/fail and the router snapshot
  void Publish();
  void MarkDirty() { dirty_ = true; }
  void SaveIfDirty();
  int SaveLocked();  // nodes.conf now: 0 or errno (nodes_conf.cc)
  bool ParseNodesLine(const std::vector<std::string>& argv);
  uint64_t MaxEpoch() const;
  bool BumpEpochLocked();
  void HandleEpochCollision(Node* sender);
  void UpdateSlotsConfigWith(Node* sender, uint64_t sender_epoch, const SlotBitmap& slots);
  std::string Description(const Node* n, bool plain_client = false) const;
  // The slot ranges (inclusive) the slot table gives n, in order.
  std::vector<std::pair<int, int>> RangesOf(const Node* n) const;
  // ---- messages (cluster_messages.cc, mu_ held)
  BusMessage BuildHeader(MsgType type);
  BusMessage BuildPing(MsgType type, Node* to);
  // Returns false when the link must be closed.
  bool Process(int fd, bool inbound, Node* link_node, const BusMessage& m,
               const std::string& local_ip, const std::string& peer_ip);
  void ProcessGossip(const BusMessage& m, Node* sender);
  bool UpdateAddressIfNeeded(Node* n, bool inbound_link, const std::string& peer_ip,
                             const BusMessage& m);
  // clusterStartHandshake: false when the address is invalid or a handshake is under way.
  bool StartHandshake(const std::string& ip, int port, int cport);
  void ProcessRoleAndSlots(Node* sender, const BusMessage& m);
  void ProcessFailoverAuthRequest(Node* sender, const BusMessage& m);
  void MarkFailingIfNeeded(Node* n);
  void ClearFailureIfNeeded(Node* n);
  void Broadcast(const BusMessage& m);
  void SendTo(Node* n, const BusMessage& m);
  void Cron();  // cluster_cron.cc
  void HandleReplicaFailover();
  // Redis's clusterHandleSlaveFailover data-age rule: false when my data is too old to start an
  // election (cluster-replica-validity-factor), logged once per reason.
  bool DataRecentEnough(bool manual);
  // clusterCron's orphaned-master census and clusterHandleSlaveMigration (cluster_migration.cc).
  void CheckReplicaMigration();
  void MigrateIfCandidate(int max_replicas);
  int CountNonFailingReplicas(const Node* n) const;
  // The parameters CONFIG SET may change, re-read from hooks_.settings (each cron run).
  void RefreshSettings();
  void ReadRunTimeSettings(const ClusterSettings& now);
  void HandleManualFailover();
  void FailoverReplaceMaster();
  int ReplicaRank();
  void ResetManualFailover();
  int64_t cron_runs_ = 0;
  int64_t links_buffer_limit_exceeded_ = 0;  // CLUSTER INFO total_cluster_links_buffer_limit_...
  std::atomic<int64_t> drop_filter_{-1};
  bool logged_data_age_ = false;
  // Whether replication toward myself_->master was asked for (SetMyMaster, or the cron for a
  // replica loaded from nodes.conf: Redis's clusterCron "replication still turned off" rule).
  bool replicating_ = false;

  Store& store_;
  ClusterSettings settings_;
  ClusterHooks hooks_;
  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<Node>> nodes_;
  Node* myself_ = nullptr;
  uint64_t current_epoch_ = 0;
  uint64_t last_vote_epoch_ = 0;
  std::array<Node*, kSlots> slots_{};
  std::array<Node*, kSlots> migrating_to_{};
  std::array<Node*, kSlots> importing_from_{};
  SlotBitmap shard_slots_lost_;  // DelSlot's marks not yet handed to the hook
  bool state_ok_ = false;
  int size_ = 0;
  int64_t among_minority_since_ = 0;
  int64_t state_fail_since_ = 0;
  bool dirty_ = false;
  std::map<std::string, int64_t> blacklist_;  // FORGET: name -> until (ms)
  std::array<int64_t, kMsgTypeCount> sent_{}, received_{};
  // failover (cluster_cron.cc)
  int64_t failover_auth_time_ = 0;
  int failover_auth_count_ = 0;
  bool failover_auth_sent_ = false;
  int failover_auth_rank_ = 0;
  uint64_t failover_auth_epoch_ = 0;
  int64_t mf_end_ = 0;
  Node* mf_replica_ = nullptr;
  int64_t mf_master_offset_ = -1;
  bool mf_can_start_ = false;
  bool mf_force_ = false;
  bool mf_paused_ = false;  // this master paused its writers for a replica's manual failover
  // Outgoing messages per fd, drained by the bus thread; links the bus must close (their node
  // was deleted or its address changed).
  std::map<int, std::string> outbox_;
  std::vector<int> to_close_;
  bool tls_reload_ = false;  // ReloadTls asked the bus to rebuild its contexts from settings_.tls
  // Replication hooks to run outside mu_ (ReplicaOf joins the old link's thread): queued under
  // mu_, run by the bus thread after it lets go of mu_.
  std::vector<std::function<void()>> deferred_;
  void CloseLink(Node* n);
  // The snapshot Route() reads.
  struct RouteTable;
  std::shared_ptr<const RouteTable> routes_;
  std::unique_ptr<class Bus> bus_;
};

// The process's cluster (nullptr outside cluster mode), for the CLUSTER commands.
Cluster* Instance();
void SetInstance(Cluster* cluster);

// Redis's node id: 40 random hex characters.
std::string RandomNodeName();
int64_t NowMs();

}  // namespace sluice::server::cluster
