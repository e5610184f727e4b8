#include "server/core/client_buffers.h"

namespace sluice::server {

void ClientBuffersTable::Add(const ClientState* client, const ClientBuffers* buffers) {
  std::lock_guard lock(mu_);
  map_[client] = buffers;
}

void ClientBuffersTable::Remove(const ClientState* client) {
  std::lock_guard lock(mu_);
  map_.erase(client);
}

const ClientBuffers* ClientBuffersTable::Find(const ClientState* client) const {
  std::lock_guard lock(mu_);
  auto it = map_.find(client);
  return it == map_.end() ? nullptr : it->second;
}

ClientBuffersTable& ClientBuffersOf() {
  static ClientBuffersTable* table = new ClientBuffersTable;  // never destroyed: threads exit late
  return *table;
}

}  // namespace sluice::server
