// Redis 7.0's exact error text of replication and FAILOVER (declared in errors.h, with the rest
// of the server's error text; kept apart only to keep errors.cc small).
#include <string>
#include <utility>

#include "server/core/errors.h"
#include "server/core/errors_failover.h"
#include "server/core/loading_state.h"

namespace sluice::server {

namespace {

Status Err(std::string message) { return Status::InvalidArgument(std::move(message)); }

}  // namespace

Status ReadOnlyReplica() { return Err("READONLY You can't write against a read only replica."); }
Status NoReplicas() { return Err("NOREPLICAS Not enough good replicas to write."); }
Status MasterDown() {
  return Err("MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.");
}
Status LoadingDataset() { return Err("LOADING Redis is loading the dataset in memory"); }
Status InvalidMasterPort() { return Err("ERR Invalid master port"); }
Status ReplicaOfByReplica() { return Err("ERR Command is not valid when client is a replica."); }
Status ReplicaOfWhileFailingOver() { return Err("ERR REPLICAOF not allowed while failing over."); }
Status WaitOnReplica() {
  return Err(
      "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a "
      "replica is configured to be writable (which is not the default) writes to replicas are "
      "just local and are not propagated.");
}
Status UnrecognizedReplconf(std::string_view option) {
  return Err("ERR Unrecognized REPLCONF option: " + std::string(option));
}
Status NoMasterLink() { return Err("NOMASTERLINK Can't SYNC while not connected with my master"); }
Status FailoverOnReplica() { return Err("ERR FAILOVER is not valid when server is a replica."); }
Status FailoverNoReplicas() { return Err("ERR FAILOVER requires connected replicas."); }
Status FailoverInProgress() { return Err("ERR FAILOVER already in progress."); }
Status NoFailoverInProgress() { return Err("ERR No failover in progress."); }
Status FailoverTimeoutPositive() { return Err("ERR FAILOVER timeout must be greater than 0"); }
Status FailoverForceNeedsTimeout() {
  return Err("ERR FAILOVER with force option requires both a timeout and target HOST and IP.");
}
Status FailoverTargetUnknown() {
  return Err("ERR FAILOVER target HOST and PORT is not a replica.");
}
Status FailoverTargetOffline() { return Err("ERR FAILOVER target replica is not online."); }
Status PsyncFailoverToPrimary() { return Err("ERR PSYNC FAILOVER can't be sent to a master."); }
Status PsyncFailoverReplidMismatch() {
  return Err("ERR PSYNC FAILOVER replid must match my replid.");
}
Status SyncWhileFailingOver() { return Err("NOMASTERLINK Can't SYNC while failing over"); }

}  // namespace sluice::server
