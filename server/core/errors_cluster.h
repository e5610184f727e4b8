// Redis 7.0's exact error text of cluster mode (CLUSTER subcommands), kept apart from errors.h
// so the cluster room's errors stay in one small file (errors_cluster.cc).
#pragma once

#include <string_view>

#include "sluice/status.h"

namespace sluice::server {

Status ClusterDisabled();    // "ERR This instance has cluster support disabled"
Status InvalidSlot();        // "ERR Invalid or out of range slot"
Status InvalidSlotShort();   // "ERR Invalid slot" (COUNTKEYSINSLOT)
Status InvalidSlotOrKeys();  // "ERR Invalid slot or number of keys" (GETKEYSINSLOT)
Status SlotAlreadyUnassigned(int slot);
Status SlotAlreadyBusy(int slot);
Status SlotSpecifiedTwice(int slot);
Status SlotRangeReversed(int start, int end);
Status InvalidBasePort(std::string_view port);
Status InvalidBusPort(std::string_view port);
Status InvalidNodeAddress(std::string_view ip, std::string_view port);
Status FlushSlotsNotEmpty();
Status SetSlotOnReplica();
Status NotSlotOwner(int slot);
Status UnknownNodeAbout(std::string_view id);  // "ERR I don't know about node <id>"
Status UnknownNode(std::string_view id);       // "ERR Unknown node <id>"
Status TargetNotMaster();
Status AlreadySlotOwner(int slot);
Status SlotHasKeys(int slot);
Status InvalidSetSlotAction();
Status SaveConfigFailed(std::string_view why);
Status ForgetMyself();
Status ForgetMyMaster();
Status ReplicateMyself();
Status ReplicateReplica();
Status ReplicateNotEmpty();
Status NotAMaster();  // CLUSTER REPLICAS of a replica
Status FailoverOnMaster();
Status FailoverMasterUnknown();
Status FailoverMasterDown();
Status InvalidConfigEpoch(long long epoch);
Status ConfigEpochOthersKnown();
Status ConfigEpochNonZero();
Status ResetWithKeys();
Status ReplicaOfInClusterMode();  // "ERR REPLICAOF not allowed in cluster mode."

}  // namespace sluice::server
