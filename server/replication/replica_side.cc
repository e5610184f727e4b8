// The replica's state changes: REPLICAOF host port / NO ONE, adopting a primary's history after
// a full sync, PSYNC's arguments, the link's up/down notes.
#include <string>

#include "server/core/logging.h"
#include "server/replication/replica_link.h"
#include "server/replication/replication.h"

namespace sluice::server::replication {

Status Replication::ReplicaOf(const std::string& host, int port, bool* already) {
  std::unique_ptr<MasterLink> old;
  {
    std::lock_guard lock(mu_);
    if (link_ != nullptr && link_->host() == host && link_->port() == port) {
      *already = true;
      return Status::Ok();
    }
    *already = false;
    old = std::move(link_);
  }
  old.reset();  // joins its thread (it may append to the backlog: outside mu_)
  std::lock_guard lock(mu_);
  // Our own history stays (Redis caches the master using itself): a PSYNC with our ID and
  // offset may continue on the new primary when it was our sibling.
  Engage();  // Admit's -READONLY and -MASTERDOWN
  is_replica_.store(true, std::memory_order_release);
  propagating_.store(false, std::memory_order_release);
  link_up_.store(false);
  store_.set_keep_expired(true);
  link_ = std::make_unique<MasterLink>(*this, host, port);
  server_.UpdateConfig([&](Config& c) {
    c.replicaof = host + " " + std::to_string(port);
    return true;
  });
  LogInfo("REPLICAOF " + host + ":" + std::to_string(port) + " enabled");
  return Status::Ok();
}

void Replication::PromoteToPrimary() {
  std::unique_ptr<MasterLink> old;
  {
    std::lock_guard lock(mu_);
    if (!is_replica_.load()) return;
    old = std::move(link_);
  }
  old.reset();
  std::lock_guard lock(mu_);
  EnsureBacklogLocked();
  replid2_ = replid_;
  second_offset_ = backlog_->offset() + 1;
  replid_ = RandomReplId();
  last_db_ = -1;
  is_replica_.store(false, std::memory_order_release);
  link_up_.store(false);
  propagating_.store(true, std::memory_order_release);
  store_.set_keep_expired(false);
  server_.UpdateConfig([](Config& c) {
    c.replicaof.clear();
    return true;
  });
  LogInfo("MASTER MODE enabled");
}

void Replication::AdoptPrimary(const std::string& replid, int64_t offset) {
  std::lock_guard lock(mu_);
  EnsureBacklogLocked();
  propagating_.store(false);
  replid_ = replid;
  replid2_ = std::string(40, '0');
  second_offset_ = -1;
  backlog_->Reset(offset);
  last_db_ = -1;
}

void Replication::ContinueWith(const std::string& new_id) {
  std::lock_guard lock(mu_);
  if (new_id.empty() || new_id == replid_) return;
  EnsureBacklogLocked();
  propagating_.store(false);
  replid2_ = replid_;
  second_offset_ = backlog_->offset() + 1;
  replid_ = new_id;
}

void Replication::PsyncArgs(std::string* replid, int64_t* offset) {
  std::lock_guard lock(mu_);
  if (backlog_ == nullptr) {
    *replid = "?";
    *offset = -1;
    return;
  }
  *replid = replid_;
  *offset = backlog_->offset() + 1;
}

void Replication::NoteMasterLink(bool up) { link_up_.store(up); }

std::string Replication::ReplicaOfLine() { return server_.config().replicaof; }

}  // namespace sluice::server::replication
