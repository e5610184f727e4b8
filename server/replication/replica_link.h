// MasterLink: a replica's link to its primary, on a thread of its own with a blocking socket:
// connect, the handshake (PING, AUTH, REPLCONF listening-port / capa, PSYNC), a full sync (load
// the RDB) or a partial one, then the stream applied through the dispatcher as the master client
// (CLIENT LIST flags=M), REPLCONF ACK every second and on GETACK. Reconnects until destroyed.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

#include "server/core/client_state.h"

namespace sluice::server::replication {

class Replication;

class MasterLink {
 public:
  MasterLink(Replication& repl, std::string host, int port);
  ~MasterLink();  // stops and joins the thread
  MasterLink(const MasterLink&) = delete;
  MasterLink& operator=(const MasterLink&) = delete;

  const std::string& host() const { return host_; }
  int port() const { return port_; }
  bool up() const { return up_.load(); }
  bool syncing() const { return syncing_.load(); }
  int64_t last_io_ms() const { return last_io_ms_.load(); }
  int64_t down_since_ms() const { return down_since_ms_.load(); }
  int64_t read_offset() const { return read_offset_.load(); }
  // Replica lag in ms: now minus when the primary's last PING or write was applied.
  int64_t last_apply_ms() const { return last_apply_ms_.load(); }

 private:
  void Run();
  bool Session();  // one connection; false when stopping
  void Close();

  Replication& repl_;
  std::string host_;
  int port_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> up_{false};
  std::atomic<bool> syncing_{false};
  std::atomic<int64_t> last_io_ms_{0};
  std::atomic<int64_t> down_since_ms_{0};
  std::atomic<int64_t> read_offset_{0};
  std::atomic<int64_t> last_apply_ms_{0};
  std::atomic<int> fd_{-1};
  ClientState client_;  // the master client
  bool registered_ = false;
  std::thread thread_;
};

}  // namespace sluice::server::replication
