// The cluster bus's sockets: listening on the bus port, one outgoing link per known node and
// the links other nodes opened, driven by one thread with poll(2). Every message is decoded
// (bus_message.h) and handed to Cluster::Process under the cluster's mutex; the cron runs
// every 100 ms on the same thread.
#pragma once

#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "server/cluster/cluster.h"

namespace sluice::server::cluster {

class Bus {
 public:
  explicit Bus(Cluster& cluster) : c_(cluster) {}
  ~Bus();
  // Binds the bus port on the bind addresses. "" or the reason.
  std::string Listen();
  void Start();
  void Stop();
  size_t link_count() const { return links_.size(); }  // mu_ held

  struct Link {
    bool inbound = false;
    Node* node = nullptr;  // outbound links only
    bool connecting = false;
    std::string rbuf;
    int64_t ctime = 0;
  };
  const std::map<int, Link>& links() const { return links_; }  // mu_ held

 private:
  void Loop();
  void Accept(int listen_fd);
  void Connect(Node* n);
  void CloseFd(int fd);
  void DrainClosed();
  void RunDeferred();  // the replication hooks queued under mu_, run without it
  bool ReadLink(int fd);
  bool WriteLink(int fd);

  Cluster& c_;
  std::vector<int> listen_fds_;
  std::map<int, Link> links_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
};

}  // namespace sluice::server::cluster
