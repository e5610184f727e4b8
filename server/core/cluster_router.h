// ClusterRouter: what the server core knows of Redis Cluster mode. The room server/cluster
// implements it (its cluster state, kept current by the cluster bus) and attaches it to the
// ServerState before serving when cluster-enabled is yes; the dispatcher asks it where each
// command's hash slot is served (Redis's getNodeByQuery inputs) to reply -MOVED, -ASK,
// -TRYAGAIN, -CROSSSLOT or -CLUSTERDOWN. With cluster mode off nothing is attached and the
// dispatcher pays one null check per command.
// Thread-safe: every method may be called from any I/O thread concurrently with the bus thread's
// updates; each call returns a consistent snapshot of one slot.
#pragma once

#include <cstdint>
#include <string>

namespace sluice::server {

// The address a client is redirected to: what CLUSTER SLOTS / -MOVED show for the node
// (cluster-announce-ip or its ip, and its client port: tls-port for TLS clients when set).
struct ClusterNodeAddress {
  std::string ip;
  int port = 0;
  int tls_port = 0;  // 0 when the node serves no TLS port
};

// One hash slot as this node sees it.
struct ClusterSlotRoute {
  enum class Owner : uint8_t { kMe, kOther, kNobody };
  Owner owner = Owner::kNobody;
  ClusterNodeAddress owner_address;  // the master serving the slot (set when owner == kOther)
  // This node owns the slot and has it MIGRATING (CLUSTER SETSLOT s MIGRATING id) to:
  bool migrating = false;
  ClusterNodeAddress migrating_to;
  // The slot is IMPORTING into this node (CLUSTER SETSLOT s IMPORTING id): ASKING clients run.
  bool importing = false;
  // This node is a replica of the slot's owner: READONLY clients may read here.
  bool served_by_my_master = false;
};

class ClusterRouter {
 public:
  virtual ~ClusterRouter() = default;
  // cluster_state:ok (every slot covered, or cluster-require-full-coverage no, and a majority
  // of masters reachable), as CLUSTER INFO reports it.
  virtual bool StateOk() const = 0;
  // cluster-allow-reads-when-down.
  virtual bool AllowReadsWhenDown() const = 0;
  // `slot` in [0, 16384).
  virtual ClusterSlotRoute Route(uint16_t slot) const = 0;
};

}  // namespace sluice::server
