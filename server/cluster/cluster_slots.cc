// CLUSTER SLOTS and CLUSTER SHARDS material (Redis 7.0's clusterReplyMultiBulkSlots and
// clusterReplyShards): slot ranges by owner, with the replicas that can serve reads.
#include "server/cluster/cluster.h"

namespace sluice::server::cluster {

namespace {

Cluster::SlotRange::Member MemberOf(const Node* n, int64_t my_offset, bool plain_client,
                                    const ClusterSettings& settings) {
  const bool tls_cluster = settings.tls_cluster;
  Cluster::SlotRange::Member m;
  m.name = n->name;
  m.ip = n->ip;
  m.hostname = n->hostname;
  m.endpoint_type = settings.preferred_endpoint;
  m.endpoint = PreferredEndpoint(m.endpoint_type, n->ip, n->hostname);
  m.port = plain_client && n->pport != 0 ? n->pport : n->port;
  // Redis takes tls-cluster as the sign that port is the TLS one.
  m.plain_port = tls_cluster ? n->pport : n->port;
  m.tls_port = tls_cluster ? n->port : 0;
  m.master = n->is_master();
  m.fail = (n->flags & kFlagFail) != 0;
  m.offset = (n->flags & kFlagMyself) ? my_offset : n->repl_offset;
  return m;
}

}  // namespace

EndpointType ParseEndpointType(const std::string& value) {
  if (value == "hostname") return EndpointType::kHostname;
  if (value == "unknown-endpoint") return EndpointType::kUnknown;
  return EndpointType::kIp;
}

std::string PreferredEndpoint(EndpointType type, const std::string& ip,
                              const std::string& hostname) {
  switch (type) {
    case EndpointType::kIp:
      return ip;
    case EndpointType::kHostname:
      return hostname.empty() ? "?" : hostname;
    case EndpointType::kUnknown:
      break;
  }
  return "";
}

void Cluster::ApplySettings() {
  std::lock_guard lock(mu_);
  RefreshSettings();
  UpdateState();
}

std::vector<Cluster::SlotRange> Cluster::SlotRanges(bool plain_client) {
  std::lock_guard lock(mu_);
  const int64_t my_offset = hooks_.repl_offset ? hooks_.repl_offset() : 0;
  std::vector<SlotRange> out;
  for (int j = 0; j < kSlots;) {
    Node* n = slots_[j];
    if (n == nullptr) {
      ++j;
      continue;
    }
    int end = j;
    while (end + 1 < kSlots && slots_[end + 1] == n) ++end;
    SlotRange r;
    r.start = j;
    r.end = end;
    r.members.push_back(MemberOf(n, my_offset, plain_client, settings_));
    for (const Node* replica : n->replicas) {
      SlotRange::Member m = MemberOf(replica, my_offset, plain_client, settings_);
      if (!m.fail && m.offset != 0) r.members.push_back(m);  // isReplicaAvailable
    }
    out.push_back(std::move(r));
    j = end + 1;
  }
  return out;
}

std::vector<Cluster::Shard> Cluster::Shards() {
  std::lock_guard lock(mu_);
  const int64_t my_offset = hooks_.repl_offset ? hooks_.repl_offset() : 0;
  std::vector<Shard> out;
  for (const auto& [name, up] : nodes_) {
    const Node* n = up.get();
    if (!n->is_master()) continue;
    Shard s;
    s.slots = RangesOf(n);
    s.members.push_back(MemberOf(n, my_offset, false, settings_));
    for (const Node* replica : n->replicas) {
      s.members.push_back(MemberOf(replica, my_offset, false, settings_));
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace sluice::server::cluster
