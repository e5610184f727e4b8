// Redis 7.0's coordinated failover (FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms]): the
// primary pauses writes, waits until the target replica (or any replica) has acknowledged its
// whole stream, then becomes that replica's replica, sending `PSYNC <replid> <offset> FAILOVER`;
// the target promotes itself on it (our ID becomes its replid2) and answers +CONTINUE, and the
// paused writes resume (as -READONLY). INFO's master_failover_state follows the states.
#include <limits>
#include <string>

#include "server/core/args.h"
#include "server/core/errors.h"
#include "server/core/errors_failover.h"
#include "server/core/logging.h"
#include "server/core/pause_purposes.h"
#include "server/replication/replica_link.h"
#include "server/replication/replication.h"

namespace sluice::server::replication {

const char* Replication::FailoverStateNameLocked() const {
  switch (failover_) {
    case FailoverState::kWaitForSync:
      return "waiting-for-sync";
    case FailoverState::kInProgress:
      return "failover-in-progress";
    default:
      return "no-failover";
  }
}

bool Replication::failing_over() {
  std::lock_guard lock(mu_);
  return failover_ != FailoverState::kNone;
}

Status Replication::Failover(const FailoverRequest& r) {
  if (r.abort) {
    if (!failing_over()) return NoFailoverInProgress();
    AbortFailover("Failover manually aborted");
    return Status::Ok();
  }
  std::lock_guard lock(mu_);
  {
    if (failover_ != FailoverState::kNone) return FailoverInProgress();
    if (is_replica_.load()) return FailoverOnReplica();
    if (replicas_.empty()) return FailoverNoReplicas();
    if (r.force && (r.timeout_ms == 0 || !r.has_target)) return FailoverForceNeedsTimeout();
    if (r.has_target) {
      const ReplicaEntry* target = nullptr;
      for (const auto& e : replicas_) {
        if (EqualsIgnoreCase(e->ip, r.host) && e->port == r.port) target = e.get();
      }
      if (target == nullptr) return FailoverTargetUnknown();
      if (target->state != ReplicaEntry::State::kOnline) return FailoverTargetOffline();
      LogInfo("FAILOVER requested to " + r.host + ":" + std::to_string(r.port) + ".");
    } else {
      LogInfo("FAILOVER requested to any replica.");
    }
  }
  failover_host_ = r.has_target ? r.host : std::string();
  failover_port_ = r.has_target ? r.port : 0;
  failover_end_ms_ = r.timeout_ms > 0 ? ServerState::RealNowMs() + r.timeout_ms : 0;
  failover_force_ = r.force;
  failover_answer_.store(0);
  failover_ = FailoverState::kWaitForSync;
  // Its own purpose, as Redis: CLIENT UNPAUSE does not lift it.
  SetPause(server_, PausePurpose::kFailover, std::numeric_limits<int64_t>::max(), /*all=*/false);
  return Status::Ok();
}

void Replication::ClearFailoverLocked() {
  failover_ = FailoverState::kNone;
  failover_host_.clear();
  failover_port_ = 0;
  failover_end_ms_ = 0;
  failover_force_ = false;
  psync_failover_.store(false);
  failover_answer_.store(0);
  LiftPause(server_, PausePurpose::kFailover);
}

void Replication::AbortFailover(const std::string& why) {
  bool demoted = false;
  {
    std::lock_guard lock(mu_);
    if (failover_ == FailoverState::kNone) return;
    const std::string target = failover_host_.empty()
                                   ? "any replica"
                                   : failover_host_ + ":" + std::to_string(failover_port_);
    LogInfo("FAILOVER to " + target + " aborted: " + why);
    demoted = failover_ == FailoverState::kInProgress;
  }
  if (demoted) PromoteToPrimary();  // back to a primary, as Redis's replicationUnsetMaster
  std::lock_guard lock(mu_);
  ClearFailoverLocked();
}

Status Replication::AcceptFailover(std::string_view replid) {
  LogInfo("Failover request received for replid " + std::string(replid) + ".");
  if (!is_replica_.load()) return PsyncFailoverToPrimary();
  {
    std::lock_guard lock(mu_);
    if (replid != replid_) return PsyncFailoverReplidMismatch();
  }
  PromoteToPrimary();
  LogInfo("MASTER MODE enabled (failover request)");
  return Status::Ok();
}

// Redis's updateFailoverStatus, plus the link's answer to PSYNC FAILOVER (clearFailoverState
// or abortFailover in Redis's syncWithMaster; here the cron acts on it, since stopping the link
// from its own thread would join itself).
void Replication::UpdateFailover() {
  const int answer = failover_answer_.load();
  if (answer == -1) return AbortFailover("Failover target rejected psync request");
  std::string host;
  int port = 0;
  {
    std::lock_guard lock(mu_);
    if (failover_ == FailoverState::kInProgress && answer == 1) {
      LogInfo("FAILOVER to " + failover_host_ + ":" + std::to_string(failover_port_) +
              " succeeded.");
      return ClearFailoverLocked();
    }
    // A client's ALL pause shorter than ours may have ended: ours alone again.
    if (failover_ != FailoverState::kNone) RefreshPauses(server_);
    if (failover_ != FailoverState::kWaitForSync) return;
    const int64_t now = ServerState::RealNowMs();
    const int64_t offset = backlog_ == nullptr ? 0 : backlog_->offset();
    if (failover_end_ms_ != 0 && failover_end_ms_ <= now) {
      if (!failover_force_) {
        failover_answer_.store(-3);
      } else {
        LogInfo("FAILOVER to " + failover_host_ + ":" + std::to_string(failover_port_) +
                " time out exceeded, failing over.");
        host = failover_host_;
        port = failover_port_;
      }
    } else {
      for (const auto& e : replicas_) {
        const bool chosen = failover_host_.empty() ||
                            (EqualsIgnoreCase(e->ip, failover_host_) && e->port == failover_port_);
        if (!chosen || e->state != ReplicaEntry::State::kOnline || e->ack_offset != offset) {
          continue;
        }
        host = e->ip;
        port = e->port;
        break;
      }
      if (!host.empty()) {
        LogInfo("Failover target " + host + ":" + std::to_string(port) +
                " is synced, failing over.");
      }
    }
    if (!host.empty()) {
      failover_host_ = host;
      failover_port_ = port;
      failover_ = FailoverState::kInProgress;
      psync_failover_.store(true);
    }
  }
  if (failover_answer_.load() == -3) return AbortFailover("Replica never caught up before timeout");
  if (host.empty()) return;
  bool already = false;
  static_cast<void>(ReplicaOf(host, port, &already));
}

}  // namespace sluice::server::replication
