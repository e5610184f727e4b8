// The cluster bus's sockets: listening on the bus port, one outgoing link per known node and
// the links other nodes opened, driven by one thread with poll(2). Every message is decoded
// (bus_message.h) and handed to Cluster::Process under the cluster's mutex; the cron runs
// every 100 ms on the same thread.
//
// tls-cluster yes: every link is TLS (server/core/tls_ssl.h), as Redis: an accepted link with
// the server context and a client certificate required (tls-auth-clients does not apply), an
// outgoing one with the client context (tls-client-cert-file, else tls-cert-file). Both are
// built when the bus starts and again after a CONFIG SET of the tls-* files (Cluster::ReloadTls). A
// handshake runs in non-blocking steps inside the poll loop, so it never holds the other links; one
// that has not finished within kHandshakeTimeoutMs (or fails) drops its link (logged) and the cron
// connects again as after any failed link. A link the bus closes after its handshake sends
// close_notify first.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "server/cluster/cluster.h"

typedef struct ssl_st SSL;
typedef struct ssl_ctx_st SSL_CTX;

namespace sluice::server::cluster {

class Bus {
 public:
  explicit Bus(Cluster& cluster) : c_(cluster) {}
  ~Bus();
  // Binds the bus port on the bind addresses (and builds the TLS contexts when tls-cluster is
  // yes). "" or the reason.
  std::string Listen();
  void Start();
  void Stop();
  // Any thread but the bus's own, after queueing messages (c_.outbox_): the loop wakes from
  // poll and sends them now rather than at its next tick (up to 100 ms later; a SETSLOT's
  // PONG announcing a bumped epoch arrived after redis-cli's next step). One eventfd write per
  // loop turn at most.
  void WakeFromOtherThread();
  size_t link_count() const { return links_.size(); }  // mu_ held

  struct Link {
    bool inbound = false;
    Node* node = nullptr;  // outbound links only
    bool connecting = false;
    std::string rbuf;
    int64_t ctime = 0;
    SSL* ssl = nullptr;        // tls-cluster: the link's TLS session (owned)
    bool handshaking = false;  // TLS handshake under way: no messages in either direction
    bool want_write = false;   // TLS needs the socket writable before it goes on
    int64_t handshake_deadline = 0;
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
  // ---- TLS (tls-cluster yes)
  // Builds both contexts from c_.settings_.tls; "" or why not (nothing changed then).
  std::string BuildTlsContexts();
  static constexpr int64_t kHandshakeTimeoutMs = 10000;
  bool StartTls(int fd, Link& link);       // false: no session could be made (logged)
  bool StepHandshake(int fd, Link& link);  // false: failed (logged), close the link
  void DropLateHandshakes();
  // One log line per failed handshake, at most one per peer and reason each 10 s (a peer that
  // keeps failing is retried every 100 ms).
  void LogTlsFailure(const std::string& peer, const std::string& why);
  std::string PeerOf(int fd, const Link& link) const;
  // read(2)/write(2) or their TLS forms: > 0 bytes, 0 the peer closed, -1 not now, -2 error.
  ssize_t Recv(int fd, Link& link, char* buf, size_t size);
  ssize_t Send(int fd, Link& link, const char* buf, size_t size);

  Cluster& c_;
  std::vector<int> listen_fds_;
  std::map<int, Link> links_;
  std::shared_ptr<SSL_CTX> tls_server_, tls_client_;  // both set when tls-cluster is yes
  std::map<std::string, int64_t> tls_logged_;         // peer and reason -> when logged (ms)
  std::thread thread_;
  std::atomic<bool> stop_{false};
  int wake_fd_ = -1;                       // eventfd in the poll set
  std::atomic<bool> wake_pending_{false};  // a wake was written and not yet drained
};

}  // namespace sluice::server::cluster
