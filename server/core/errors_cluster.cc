// Redis 7.0.15's cluster.c error text (declared in errors_cluster.h).
#include "server/core/errors_cluster.h"

#include <string>
#include <utility>

namespace sluice::server {

namespace {
Status Err(std::string message) { return Status::InvalidArgument("ERR " + std::move(message)); }
std::string S(int v) { return std::to_string(v); }
}  // namespace

Status ClusterDisabled() { return Err("This instance has cluster support disabled"); }
Status InvalidSlot() { return Err("Invalid or out of range slot"); }
Status InvalidSlotShort() { return Err("Invalid slot"); }
Status InvalidSlotOrKeys() { return Err("Invalid slot or number of keys"); }
Status SlotAlreadyUnassigned(int slot) { return Err("Slot " + S(slot) + " is already unassigned"); }
Status SlotAlreadyBusy(int slot) { return Err("Slot " + S(slot) + " is already busy"); }
Status SlotSpecifiedTwice(int slot) { return Err("Slot " + S(slot) + " specified multiple times"); }
Status SlotRangeReversed(int start, int end) {
  return Err("start slot number " + S(start) + " is greater than end slot number " + S(end));
}
Status InvalidBasePort(std::string_view port) {
  return Err("Invalid TCP base port specified: " + std::string(port));
}
Status InvalidBusPort(std::string_view port) {
  return Err("Invalid TCP bus port specified: " + std::string(port));
}
Status InvalidNodeAddress(std::string_view ip, std::string_view port) {
  return Err("Invalid node address specified: " + std::string(ip) + ":" + std::string(port));
}
Status FlushSlotsNotEmpty() { return Err("DB must be empty to perform CLUSTER FLUSHSLOTS."); }
Status SetSlotOnReplica() { return Err("Please use SETSLOT only with masters."); }
Status NotSlotOwner(int slot) { return Err("I'm not the owner of hash slot " + S(slot)); }
Status UnknownNodeAbout(std::string_view id) {
  return Err("I don't know about node " + std::string(id));
}
Status UnknownNode(std::string_view id) { return Err("Unknown node " + std::string(id)); }
Status TargetNotMaster() { return Err("Target node is not a master"); }
Status AlreadySlotOwner(int slot) { return Err("I'm already the owner of hash slot " + S(slot)); }
Status SlotHasKeys(int slot) {
  return Err("Can't assign hashslot " + S(slot) +
             " to a different node while I still hold keys for this hash slot.");
}
Status InvalidSetSlotAction() {
  return Err("Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP");
}
Status SaveConfigFailed(std::string_view why) {
  return Err("error saving the cluster node config: " + std::string(why));
}
Status ForgetMyself() { return Err("I tried hard but I can't forget myself..."); }
Status ForgetMyMaster() { return Err("Can't forget my master!"); }
Status ReplicateMyself() { return Err("Can't replicate myself"); }
Status ReplicateReplica() { return Err("I can only replicate a master, not a replica."); }
Status ReplicateNotEmpty() {
  return Err("To set a master the node must be empty and without assigned slots.");
}
Status NotAMaster() { return Err("The specified node is not a master"); }
Status FailoverOnMaster() { return Err("You should send CLUSTER FAILOVER to a replica"); }
Status FailoverMasterUnknown() { return Err("I'm a replica but my master is unknown to me"); }
Status FailoverMasterDown() {
  return Err("Master is down or failed, please use CLUSTER FAILOVER FORCE");
}
Status InvalidConfigEpoch(long long epoch) {
  return Err("Invalid config epoch specified: " + std::to_string(epoch));
}
Status ConfigEpochOthersKnown() {
  return Err(
      "The user can assign a config epoch only when the node does not know any other "
      "node.");
}
Status ConfigEpochNonZero() { return Err("Node config epoch is already non-zero"); }
Status ResetWithKeys() {
  return Err("CLUSTER RESET can't be called with master nodes containing keys");
}

Status ReplicaOfInClusterMode() { return Err("REPLICAOF not allowed in cluster mode."); }

}  // namespace sluice::server
