// Replica migration (Redis 7.0's clusterCron orphaned-master census and
// clusterHandleSlaveMigration) and the cron's re-reading of the cluster-* parameters CONFIG SET
// may change. mu_ held throughout (the bus thread's cron).
#include "server/cluster/cluster.h"
#include "server/core/logging.h"

namespace sluice::server::cluster {

namespace {
// CLUSTER_SLAVE_MIGRATION_DELAY: an orphaned master waits this long (ms) for its own replicas
// to announce themselves (after a failover) before another master's replica moves to it.
constexpr int64_t kMigrationDelayMs = 5000;
}  // namespace

void Cluster::RefreshSettings() {
  if (hooks_.settings) ReadRunTimeSettings(hooks_.settings());
  // clusterUpdateMyselfFlags: the nofailover flag follows cluster-replica-no-failover (and
  // travels in every message header).
  const uint16_t flags = static_cast<uint16_t>(
      (myself_->flags & ~kFlagNoFailover) | (settings_.replica_no_failover ? kFlagNoFailover : 0));
  if (flags != myself_->flags) {
    myself_->flags = flags;
    MarkDirty();
  }
}

void Cluster::ReadRunTimeSettings(const ClusterSettings& now) {
  settings_.node_timeout_ms = now.node_timeout_ms;
  settings_.require_full_coverage = now.require_full_coverage;
  settings_.allow_reads_when_down = now.allow_reads_when_down;
  settings_.replica_validity_factor = now.replica_validity_factor;
  settings_.migration_barrier = now.migration_barrier;
  settings_.allow_replica_migration = now.allow_replica_migration;
  settings_.replica_no_failover = now.replica_no_failover;
  settings_.repl_ping_replica_period_s = now.repl_ping_replica_period_s;
  settings_.preferred_endpoint = now.preferred_endpoint;
  settings_.link_sendbuf_limit = now.link_sendbuf_limit;
  if (now.announce_hostname != settings_.announce_hostname) {
    settings_.announce_hostname = now.announce_hostname;
    myself_->hostname = now.announce_hostname;
    MarkDirty();
  }
}

// clusterCountNonFailingSlaves: replicas not flagged FAIL (PFAIL ones still count).
int Cluster::CountNonFailingReplicas(const Node* n) const {
  int ok = 0;
  for (const Node* r : n->replicas) {
    if (!(r->flags & kFlagFail)) ++ok;
  }
  return ok;
}

// The census clusterCron takes on a replica: masters serving slots that used to have replicas
// (MIGRATE_TO) and have none working are orphaned; a replica of one of the masters with the
// most working replicas considers moving (at least two: one must stay behind).
void Cluster::CheckReplicaMigration() {
  if (!myself_->is_replica() || !settings_.allow_replica_migration) return;
  int orphaned = 0, max_replicas = 0, my_masters = 0;
  for (auto& [name, up] : nodes_) {
    const Node* n = up.get();
    if (n->flags & (kFlagMyself | kFlagNoAddr | kFlagHandshake)) continue;
    if (!n->is_master() || (n->flags & kFlagFail)) continue;
    const int ok = CountNonFailingReplicas(n);
    if (ok == 0 && n->numslots > 0 && (n->flags & kFlagMigrateTo)) ++orphaned;
    if (ok > max_replicas) max_replicas = ok;
    if (myself_->master == n) my_masters = ok;
  }
  if (orphaned > 0 && max_replicas >= 2 && my_masters == max_replicas) {
    MigrateIfCandidate(max_replicas);
  }
}

// clusterHandleSlaveMigration: when the cluster is ok and my master keeps more than
// cluster-migration-barrier working replicas without me, the replica with the smallest id among
// the masters with the most working replicas moves to the first orphaned master, once that master
// has been orphaned for kMigrationDelayMs.
void Cluster::MigrateIfCandidate(int max_replicas) {
  Node* my_master = myself_->master;
  if (!state_ok_ || my_master == nullptr) return;
  int ok_replicas = 0;
  for (const Node* r : my_master->replicas) {
    if (!(r->flags & (kFlagFail | kFlagPfail))) ++ok_replicas;
  }
  if (ok_replicas <= settings_.migration_barrier) return;
  const int64_t now = NowMs();
  Node* candidate = myself_;
  Node* target = nullptr;
  for (auto& [name, up] : nodes_) {
    Node* n = up.get();
    const int ok = n->is_master() ? CountNonFailingReplicas(n) : 0;
    const bool orphaned =
        n->is_master() && !(n->flags & kFlagFail) && (n->flags & kFlagMigrateTo) != 0 && ok == 0;
    if (orphaned) {
      if (target == nullptr && n->numslots > 0) target = n;
      if (n->orphaned_time == 0) n->orphaned_time = now;
    } else {
      n->orphaned_time = 0;
    }
    if (ok != max_replicas) continue;
    for (Node* r : n->replicas) {
      if (r->name < candidate->name) candidate = r;  // ids: 40 hex characters
    }
  }
  if (target != nullptr && candidate == myself_ &&
      now - target->orphaned_time > kMigrationDelayMs) {
    LogInfo("Migrating to orphaned master " + target->name);
    SetMyMaster(target);
  }
}

}  // namespace sluice::server::cluster
