// The cluster cron (every 100 ms on the bus thread, mu_ held) and replica elections: Redis 7.0's
// clusterCron, clusterHandleSlaveFailover, clusterSendFailoverAuthIfNeeded and manual failover.
#include <algorithm>
#include <random>

#include "server/cluster/cluster.h"
#include "server/core/logging.h"

namespace sluice::server::cluster {

namespace {
int64_t Jitter(int64_t below) {
  static thread_local std::mt19937_64 rng(std::random_device{}());
  return static_cast<int64_t>(rng() % static_cast<uint64_t>(below));
}
}  // namespace

void Cluster::Cron() {
  RefreshSettings();
  const int64_t now = NowMs();
  const int64_t timeout = settings_.node_timeout_ms;
  ++cron_runs_;
  // Handshakes that never completed are dropped.
  const int64_t handshake_timeout = std::max<int64_t>(timeout, 1000);
  std::vector<Node*> doomed;
  for (auto& [name, n] : nodes_) {
    if ((n->flags & kFlagHandshake) && now - n->ctime > handshake_timeout)
      doomed.push_back(n.get());
  }
  for (Node* n : doomed) DeleteNode(n);
  for (auto it = blacklist_.begin(); it != blacklist_.end();) {
    it = it->second < now ? blacklist_.erase(it) : std::next(it);
  }
  // Every second: ping the node (of 5 random ones) whose pong is the oldest.
  if (cron_runs_ % 10 == 0) {
    std::vector<Node*> pool;
    for (auto& [name, n] : nodes_) {
      if (n->link >= 0 && n->ping_sent == 0 && !(n->flags & (kFlagMyself | kFlagHandshake))) {
        pool.push_back(n.get());
      }
    }
    Node* oldest = nullptr;
    for (int i = 0; i < 5 && !pool.empty(); ++i) {
      const size_t k = static_cast<size_t>(Jitter(static_cast<int64_t>(pool.size())));
      if (oldest == nullptr || pool[k]->pong_received < oldest->pong_received) oldest = pool[k];
    }
    if (oldest != nullptr) {
      oldest->ping_sent = now;
      SendTo(oldest, BuildPing(MsgType::kPing, oldest));
    }
  }
  bool update = false;
  for (auto& [name, up] : nodes_) {
    Node* n = up.get();
    if (n->link >= 0 && settings_.link_sendbuf_limit != 0) {
      auto out = outbox_.find(n->link);
      if (out != outbox_.end() && out->second.size() > settings_.link_sendbuf_limit) {
        CloseLink(n);  // the cron connects again
        ++links_buffer_limit_exceeded_;
      }
    }
    if (n->flags & (kFlagMyself | kFlagNoAddr | kFlagHandshake)) continue;
    if (n->link >= 0 && now - n->link_ctime > timeout && n->ping_sent != 0 &&
        now - n->ping_sent > timeout / 2 && now - n->data_received > timeout / 2) {
      CloseLink(n);  // reconnect: the link may be the problem, not the node
    }
    if (n->link >= 0 && n->ping_sent == 0 && now - n->pong_received > timeout / 2) {
      n->ping_sent = now;
      SendTo(n, BuildPing(MsgType::kPing, n));
      continue;
    }
    if (mf_end_ != 0 && myself_->is_master() && mf_replica_ == n && n->link >= 0) {
      SendTo(n, BuildPing(MsgType::kPing, n));
      continue;
    }
    if (n->ping_sent == 0) continue;
    const int64_t delay = std::min(now - n->ping_sent, now - n->data_received);
    if (delay > timeout && !(n->flags & (kFlagPfail | kFlagFail))) {
      LogInfo("*** NODE " + n->name + " possibly failing");
      n->flags |= kFlagPfail;
      update = true;
    }
  }
  (void)update;
  // A replica restarted from nodes.conf: replication starts once its master's address is known.
  Node* master = myself_->master;
  if (myself_->is_replica() && !replicating_ && master != nullptr && hooks_.replicate &&
      !(master->flags & kFlagNoAddr) && !master->ip.empty() && master->port != 0) {
    replicating_ = true;
    deferred_.push_back(
        [this, ip = master->ip, port = master->pport ? master->pport : master->port] {
          hooks_.replicate(ip, port);
        });
  }
  if (mf_end_ != 0 && mf_end_ < now) {
    LogInfo("Manual failover timed out.");
    ResetManualFailover();
  }
  if (myself_->is_replica()) {
    HandleManualFailover();
    HandleReplicaFailover();
    CheckReplicaMigration();
  }
  UpdateState();
  SaveIfDirty();
}

void Cluster::ResetManualFailover() {
  mf_end_ = 0;
  mf_can_start_ = false;
  mf_replica_ = nullptr;
  mf_master_offset_ = -1;
  mf_force_ = false;
  if (mf_paused_ && hooks_.pause_writes) hooks_.pause_writes(0);
  mf_paused_ = false;
}

void Cluster::HandleManualFailover() {
  if (mf_end_ == 0 || mf_can_start_ || mf_master_offset_ == -1) return;
  const int64_t mine = hooks_.repl_offset ? hooks_.repl_offset() : 0;
  if (mine == mf_master_offset_) {
    mf_can_start_ = true;
    LogInfo("All master replication stream processed, manual failover can start.");
  }
}

// Replicas of my master with a larger offset than mine rank before me (they wait less).
int Cluster::ReplicaRank() {
  Node* master = myself_->master;
  if (master == nullptr) return 0;
  const int64_t mine = hooks_.repl_offset ? hooks_.repl_offset() : 0;
  int rank = 0;
  for (Node* r : master->replicas) {
    if (r != myself_ && !(r->flags & kFlagNoFailover) && r->repl_offset > mine) ++rank;
  }
  return rank;
}

void Cluster::HandleReplicaFailover() {
  Node* master = myself_->master;
  const int64_t now = NowMs();
  const int64_t timeout = settings_.node_timeout_ms;
  const int quorum = size_ / 2 + 1;
  const bool manual = mf_end_ != 0 && mf_can_start_;
  const int64_t auth_timeout = std::max<int64_t>(timeout * 2, 2000);
  if (master == nullptr || (!(master->flags & kFlagFail) && !manual) ||
      (settings_.replica_no_failover && !manual) || master->numslots == 0) {
    return;
  }
  if (!DataRecentEnough(manual)) return;
  if (now - failover_auth_time_ > auth_timeout * 2) {
    failover_auth_time_ = now + 500 + Jitter(500);
    failover_auth_count_ = 0;
    failover_auth_sent_ = false;
    failover_auth_rank_ = ReplicaRank();
    failover_auth_time_ += failover_auth_rank_ * 1000;
    if (manual) {
      failover_auth_time_ = now;
      failover_auth_rank_ = 0;
    }
    LogInfo("Start of election delayed for " + std::to_string(failover_auth_time_ - now) +
            " milliseconds (rank #" + std::to_string(failover_auth_rank_) + ").");
    for (Node* r : master->replicas) {
      if (r != myself_) SendTo(r, BuildPing(MsgType::kPong, r));
    }
    return;
  }
  if (!failover_auth_sent_ && !manual) {
    const int rank = ReplicaRank();
    if (rank > failover_auth_rank_) {
      failover_auth_time_ += (rank - failover_auth_rank_) * 1000;
      failover_auth_rank_ = rank;
    }
  }
  if (now < failover_auth_time_) return;
  if (now - failover_auth_time_ > auth_timeout) return;  // expired: retried later
  if (!failover_auth_sent_) {
    ++current_epoch_;
    failover_auth_epoch_ = current_epoch_;
    LogInfo("Starting a failover election for epoch " + std::to_string(current_epoch_) + ".");
    BusMessage req = BuildHeader(MsgType::kFailoverAuthRequest);
    if (manual) req.mflags[0] |= kMflagForceAck;
    Broadcast(req);
    failover_auth_sent_ = true;
    MarkDirty();
    return;
  }
  if (failover_auth_count_ >= quorum) {
    LogInfo("Failover election won: I'm the new master.");
    if (myself_->config_epoch < failover_auth_epoch_) {
      myself_->config_epoch = failover_auth_epoch_;
      LogInfo("configEpoch set to " + std::to_string(myself_->config_epoch) +
              " after successful failover");
    }
    FailoverReplaceMaster();
    ResetManualFailover();
  }
}

bool Cluster::DataRecentEnough(bool manual) {
  const int64_t factor = settings_.replica_validity_factor;
  const int64_t timeout = settings_.node_timeout_ms;
  int64_t age = hooks_.master_data_age_ms ? hooks_.master_data_age_ms() : 0;
  // Being cut off while the master was going down (node timeout) is the baseline.
  if (age > timeout) age -= timeout;
  if (manual || factor == 0 ||
      age <= settings_.repl_ping_replica_period_s * 1000 + timeout * factor) {
    logged_data_age_ = false;
    return true;
  }
  if (!logged_data_age_) {
    LogInfo(
        "Currently unable to failover: Disconnected from master for longer than allowed. Please "
        "check the 'cluster-replica-validity-factor' configuration option.");
    logged_data_age_ = true;
  }
  return false;
}

// clusterFailoverReplaceYourMaster: take the old master's slots, stop replicating, tell all.
void Cluster::FailoverReplaceMaster() {
  Node* old = myself_->master;
  if (myself_->is_master() || old == nullptr) return;
  SetNodeAsMaster(myself_);
  if (hooks_.promote) deferred_.push_back([this] { hooks_.promote(); });
  for (int j = 0; j < kSlots; ++j) {
    if (slots_[j] == old) {
      DelSlot(j);
      AddSlot(myself_, j);
    }
  }
  UpdateState();
  SaveLocked();
  Broadcast(BuildPing(MsgType::kPong, nullptr));
}

void Cluster::ProcessFailoverAuthRequest(Node* node, const BusMessage& m) {
  Node* master = node->master;
  const int64_t now = NowMs();
  const bool force_ack = (m.mflags[0] & kMflagForceAck) != 0;
  if (myself_->is_replica() || myself_->numslots == 0) return;
  if (m.current_epoch < current_epoch_ || last_vote_epoch_ == current_epoch_) return;
  if (node->is_master() || master == nullptr || (!(master->flags & kFlagFail) && !force_ack)) {
    return;
  }
  if (now - master->voted_time < settings_.node_timeout_ms * 2) return;
  for (int j = 0; j < kSlots; ++j) {
    if (!m.myslots.test(j) || slots_[j] == nullptr) continue;
    if (slots_[j]->config_epoch > m.config_epoch) return;  // stale claim
  }
  last_vote_epoch_ = current_epoch_;
  master->voted_time = now;
  SaveLocked();
  LogInfo("Failover auth granted to " + node->name + " for epoch " +
          std::to_string(current_epoch_));
  SendTo(node, BuildHeader(MsgType::kFailoverAuthAck));
}

}  // namespace sluice::server::cluster
