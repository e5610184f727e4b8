// The cluster bus's poll loop: see bus.h.
#include "server/cluster/bus.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "server/core/logging.h"
#include "server/core/tls_ssl.h"

namespace sluice::server::cluster {

namespace {

constexpr size_t kMaxMessage = 64u << 20;  // larger frames drop the link

bool ToSockaddr(const std::string& ip, int port, sockaddr_storage* ss, socklen_t* len) {
  std::memset(ss, 0, sizeof(*ss));
  auto* v4 = reinterpret_cast<sockaddr_in*>(ss);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(ss);
  if (inet_pton(AF_INET, ip.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(port));
    *len = sizeof(sockaddr_in);
    return true;
  }
  if (inet_pton(AF_INET6, ip.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port));
    *len = sizeof(sockaddr_in6);
    return true;
  }
  return false;
}

std::string IpOf(const sockaddr_storage& ss) {
  char buf[INET6_ADDRSTRLEN] = {0};
  if (ss.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&ss)->sin_addr, buf, sizeof(buf));
  } else if (ss.ss_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_addr, buf, sizeof(buf));
  }
  return buf;
}

std::string LocalIp(int fd) {
  sockaddr_storage ss;
  socklen_t len = sizeof(ss);
  return getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0 ? IpOf(ss) : "";
}

std::string PeerIp(int fd) {
  sockaddr_storage ss;
  socklen_t len = sizeof(ss);
  return getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0 ? IpOf(ss) : "";
}

void Nonblocking(int fd) {
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL, 0) | O_NONBLOCK);
  fcntl(fd, F_SETFD, FD_CLOEXEC);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

}  // namespace

Bus::~Bus() { Stop(); }

std::string Bus::Listen() {
  if (c_.settings_.tls_cluster) {
    if (std::string why = BuildTlsContexts(); !why.empty()) return why;
  }
  for (std::string addr : c_.settings_.bind) {
    if (!addr.empty() && addr[0] == '-') addr.erase(0, 1);
    if (addr == "*") addr = "0.0.0.0";
    if (addr == "::*") addr = "::";
    sockaddr_storage ss;
    socklen_t len = 0;
    if (!ToSockaddr(addr, c_.settings_.bus_port, &ss, &len)) continue;
    int fd = socket(ss.ss_family, SOCK_STREAM, 0);
    if (fd < 0) continue;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (ss.ss_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    if (bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0 || listen(fd, 511) != 0) {
      const std::string why = std::strerror(errno);
      close(fd);
      return "Could not bind the cluster bus port " + addr + ":" +
             std::to_string(c_.settings_.bus_port) + ": " + why;
    }
    Nonblocking(fd);
    listen_fds_.push_back(fd);
  }
  if (listen_fds_.empty()) return "Could not bind the cluster bus port: no usable bind address";
  return "";
}

void Bus::Start() {
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);  // -1: the loop's tick still sends
  thread_ = std::thread([this] { Loop(); });
}

namespace {
thread_local bool on_bus_thread = false;  // set by Loop: the bus sends its own queue anyway
}  // namespace

void Bus::WakeFromOtherThread() {
  if (wake_fd_ < 0 || on_bus_thread) return;
  if (wake_pending_.exchange(true, std::memory_order_acq_rel)) return;
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof one);
}

void Bus::Stop() {
  stop_ = true;
  wake_pending_ = false;
  WakeFromOtherThread();
  if (thread_.joinable()) thread_.join();
  if (wake_fd_ >= 0) close(wake_fd_);
  wake_fd_ = -1;
  for (int fd : listen_fds_) close(fd);
  listen_fds_.clear();
  for (auto& [fd, link] : links_) {
    if (link.ssl != nullptr) {
      TlsSendCloseNotify(link.ssl);
      SSL_free(link.ssl);
    }
    close(fd);
  }
  links_.clear();
}

void Bus::CloseFd(int fd) {
  auto it = links_.find(fd);
  if (it == links_.end()) return;
  if (it->second.node != nullptr && it->second.node->link == fd) it->second.node->link = -1;
  if (it->second.inbound) {
    for (auto& [name, n] : c_.nodes_) {
      if (n->inbound_link == fd) n->inbound_link = -1;
    }
  }
  c_.outbox_.erase(fd);
  if (it->second.ssl != nullptr) {
    TlsSendCloseNotify(it->second.ssl);  // nothing when the handshake had not finished
    SSL_free(it->second.ssl);
  }
  close(fd);
  links_.erase(it);
}

void Bus::DrainClosed() {
  std::vector<int> fds;
  fds.swap(c_.to_close_);
  for (int fd : fds) {
    auto it = links_.find(fd);
    if (it == links_.end()) continue;
    it->second.node = nullptr;  // the node is gone or already unlinked
    CloseFd(fd);
  }
}

void Bus::Accept(int listen_fd) {
  for (;;) {
    int fd = accept(listen_fd, nullptr, nullptr);
    if (fd < 0) return;
    Nonblocking(fd);
    Link link;
    link.inbound = true;
    link.ctime = NowMs();
    if (tls_server_ != nullptr && !StartTls(fd, link)) {
      close(fd);
      continue;
    }
    links_[fd] = std::move(link);
  }
}

void Bus::Connect(Node* n) {
  sockaddr_storage ss;
  socklen_t len = 0;
  if (!ToSockaddr(n->ip, n->cport, &ss, &len)) return;
  int fd = socket(ss.ss_family, SOCK_STREAM, 0);
  if (fd < 0) return;
  Nonblocking(fd);
  if (connect(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0 && errno != EINPROGRESS) {
    close(fd);
    return;
  }
  Link link;
  link.node = n;
  link.connecting = true;
  link.ctime = NowMs();
  links_[fd] = std::move(link);
  n->link = fd;
  n->link_ctime = NowMs();
  // A PING (or MEET) goes first, so failure detection sees a ping in flight at once.
  const int64_t old_ping_sent = n->ping_sent;
  const MsgType type = (n->flags & kFlagMeet) ? MsgType::kMeet : MsgType::kPing;
  c_.SendTo(n, c_.BuildPing(type, n));
  n->ping_sent = old_ping_sent != 0 ? old_ping_sent : NowMs();
  n->flags &= ~kFlagMeet;
}

// Reads what arrived and processes every whole message. False: close the link.
bool Bus::ReadLink(int fd) {
  Link& link = links_[fd];
  char buf[16384];
  for (;;) {
    const ssize_t n = Recv(fd, link, buf, sizeof(buf));
    if (n > 0) {
      link.rbuf.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n == -1) break;
    return false;
  }
  size_t at = 0;
  bool keep = true;
  while (keep) {
    std::string_view rest(link.rbuf.data() + at, link.rbuf.size() - at);
    std::optional<uint32_t> total = FrameLength(rest);
    if (!total) break;
    if (*total < 8 || *total > kMaxMessage) return false;
    if (rest.size() < *total) break;
    BusMessage m;
    std::string why;
    if (Decode(rest.substr(0, *total), &m, &why)) {
      keep = c_.Process(fd, link.inbound, link.node, m, LocalIp(fd), PeerIp(fd));
      DrainClosed();
      if (links_.find(fd) == links_.end()) return true;  // closed while processing
    } else {
      LogInfo("cluster bus: dropped an invalid message: " + why);
    }
    at += *total;
  }
  auto it = links_.find(fd);
  if (it != links_.end()) it->second.rbuf.erase(0, at);
  return keep;
}

bool Bus::WriteLink(int fd) {
  auto it = c_.outbox_.find(fd);
  if (it == c_.outbox_.end() || it->second.empty()) return true;
  const ssize_t n = Send(fd, links_[fd], it->second.data(), it->second.size());
  if (n == -1) return true;
  if (n <= 0) return false;
  it->second.erase(0, static_cast<size_t>(n));
  if (it->second.empty()) c_.outbox_.erase(it);
  return true;
}

std::string Bus::BuildTlsContexts() {
  std::string why;
  std::shared_ptr<SSL_CTX> server(NewTlsServerContext(c_.settings_.tls, &why), SSL_CTX_free);
  if (server == nullptr) return "Cluster bus TLS: " + why;
  std::shared_ptr<SSL_CTX> client = BuildTlsClientContext(c_.settings_.tls, &why);
  if (client == nullptr) return "Cluster bus TLS (client side): " + why;
  tls_server_ = std::move(server);  // links made with the old ones keep them (SSL_new refs)
  tls_client_ = std::move(client);
  return "";
}

ssize_t Bus::Recv(int fd, Link& link, char* buf, size_t size) {
  if (link.ssl == nullptr) {
    for (;;) {
      const ssize_t n = read(fd, buf, size);
      if (n >= 0) return n;
      if (errno == EINTR) continue;
      return errno == EAGAIN || errno == EWOULDBLOCK ? -1 : -2;
    }
  }
  link.want_write = false;
  ERR_clear_error();
  const int n = SSL_read(link.ssl, buf, static_cast<int>(size));
  if (n > 0) return n;
  switch (SSL_get_error(link.ssl, n)) {
    case SSL_ERROR_WANT_READ:
      return -1;
    case SSL_ERROR_WANT_WRITE:
      link.want_write = true;
      return -1;
    case SSL_ERROR_ZERO_RETURN:
      return 0;  // close_notify
    case SSL_ERROR_SSL: {
      // An alert after the handshake: with TLS 1.3 the client's handshake ends before the
      // server checked its certificate, so a refusal shows here.
      LogTlsFailure(PeerOf(fd, link), OpenSslError("TLS error"));
      SSL_set_quiet_shutdown(link.ssl, 1);  // no close_notify after a fatal error
      return -2;
    }
    default:
      SSL_set_quiet_shutdown(link.ssl, 1);
      return -2;
  }
}

ssize_t Bus::Send(int fd, Link& link, const char* buf, size_t size) {
  if (link.ssl == nullptr) {
    for (;;) {
      const ssize_t n = write(fd, buf, size);
      if (n >= 0) return n == 0 ? -1 : n;
      if (errno == EINTR) continue;
      return errno == EAGAIN || errno == EWOULDBLOCK ? -1 : -2;
    }
  }
  link.want_write = false;
  ERR_clear_error();
  const int n = SSL_write(link.ssl, buf, static_cast<int>(std::min<size_t>(size, 1u << 30)));
  if (n > 0) return n;
  switch (SSL_get_error(link.ssl, n)) {
    case SSL_ERROR_WANT_READ:
      return -1;  // POLLIN is always polled; the next read lets the write go on
    case SSL_ERROR_WANT_WRITE:
      link.want_write = true;
      return -1;
    default:
      SSL_set_quiet_shutdown(link.ssl, 1);  // no close_notify after a fatal error
      return -2;
  }
}

bool Bus::StartTls(int fd, Link& link) {
  link.ssl = NewTlsSession(link.inbound ? tls_server_.get() : tls_client_.get(), fd,
                           /*client=*/!link.inbound);
  if (link.ssl == nullptr) {
    LogTlsFailure(PeerOf(fd, link), "cannot create a TLS session");
    return false;
  }
  // An accepted link must present a certificate the CA signed (Redis: TLS_CLIENT_AUTH_YES).
  if (link.inbound) {
    SSL_set_verify(link.ssl, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  }
  link.handshaking = true;
  link.want_write = false;
  link.handshake_deadline = NowMs() + std::min(kHandshakeTimeoutMs, c_.settings_.node_timeout_ms);
  return true;
}

bool Bus::StepHandshake(int fd, Link& link) {
  std::string why;
  switch (TlsHandshakeStep(link.ssl, &why)) {
    case TlsProgress::kDone:
      link.handshaking = link.want_write = false;
      return true;
    case TlsProgress::kWantRead:
      link.want_write = false;
      return true;
    case TlsProgress::kWantWrite:
      link.want_write = true;
      return true;
    case TlsProgress::kFailed:
      break;
  }
  LogTlsFailure(PeerOf(fd, link), why);
  return false;
}

void Bus::DropLateHandshakes() {
  const int64_t now = NowMs();
  std::vector<int> late;
  for (const auto& [fd, link] : links_) {
    if (link.handshaking && now > link.handshake_deadline) late.push_back(fd);
  }
  for (int fd : late) {
    LogTlsFailure(PeerOf(fd, links_[fd]), "the TLS handshake did not finish in time");
    CloseFd(fd);
  }
}

std::string Bus::PeerOf(int fd, const Link& link) const {
  if (!link.inbound && link.node != nullptr) {
    return "node " + link.node->name + " (" + link.node->ip + ":" +
           std::to_string(link.node->cport) + ")";
  }
  return "an incoming link from " + PeerIp(fd);
}

void Bus::LogTlsFailure(const std::string& peer, const std::string& why) {
  const int64_t now = NowMs();
  int64_t& last = tls_logged_[peer + "\n" + why];
  if (last != 0 && now - last < 10000) return;
  last = now;
  if (tls_logged_.size() > 1024) tls_logged_.clear();  // bounded: peers come and go
  LogError("Cluster bus: TLS handshake with " + peer + " failed: " + why +
           " (the link is dropped and retried)");
}

void Bus::RunDeferred() {
  std::vector<std::function<void()>> work;
  {
    std::lock_guard lock(c_.mu_);
    work.swap(c_.deferred_);
  }
  for (auto& w : work) w();
}

void Bus::Loop() {
  on_bus_thread = true;
  int64_t next_cron = NowMs();
  std::vector<pollfd> pfds;
  while (!stop_) {
    pfds.clear();
    {
      std::lock_guard lock(c_.mu_);
      DrainClosed();
      if (c_.tls_reload_) {
        c_.tls_reload_ = false;
        const std::string why = BuildTlsContexts();
        if (why.empty()) {
          LogInfo("Cluster bus: TLS certificates and settings reloaded for new links");
        } else {
          LogError(why + " (the bus keeps its current TLS settings)");
        }
      }
      for (int fd : listen_fds_) pfds.push_back({fd, POLLIN, 0});
      if (wake_fd_ >= 0) pfds.push_back({wake_fd_, POLLIN, 0});
      for (auto& [fd, link] : links_) {
        short events = POLLIN;
        auto out = c_.outbox_.find(fd);
        const bool queued = out != c_.outbox_.end() && !out->second.empty();
        if (link.handshaking) {
          events = link.want_write ? POLLOUT : POLLIN;
        } else if (link.connecting || link.want_write || queued) {
          events |= POLLOUT;
        }
        pfds.push_back({fd, events, 0});
      }
    }
    RunDeferred();
    const int64_t wait = std::clamp<int64_t>(next_cron - NowMs(), 0, 100);
    poll(pfds.data(), pfds.size(), static_cast<int>(wait));
    std::lock_guard lock(c_.mu_);
    DrainClosed();
    for (const pollfd& p : pfds) {
      if (p.revents == 0) continue;
      if (p.fd == wake_fd_) {  // what woke it is queued: the writes below (POLLOUT) go next turn
        uint64_t count = 0;
        [[maybe_unused]] ssize_t n = read(wake_fd_, &count, sizeof count);
        wake_pending_.store(false, std::memory_order_release);
        continue;
      }
      if (std::find(listen_fds_.begin(), listen_fds_.end(), p.fd) != listen_fds_.end()) {
        Accept(p.fd);
        continue;
      }
      auto it = links_.find(p.fd);
      if (it == links_.end()) continue;
      bool keep = true;
      if (it->second.connecting && (p.revents & (POLLOUT | POLLERR | POLLHUP))) {
        int err = 0;
        socklen_t len = sizeof(err);
        getsockopt(p.fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err != 0) keep = false;
        it->second.connecting = false;
        if (keep && tls_client_ != nullptr) keep = StartTls(p.fd, it->second);
      }
      if (keep && it->second.handshaking) {
        keep = StepHandshake(p.fd, it->second);
        if (keep && it->second.handshaking) continue;
      }
      // A TLS session may hold decrypted bytes, or have waited to write for a read: read on
      // any event.
      const bool tls = it->second.ssl != nullptr;
      if (keep && (tls || (p.revents & (POLLIN | POLLHUP | POLLERR)))) keep = ReadLink(p.fd);
      if (keep && links_.count(p.fd) && (p.revents & POLLOUT)) keep = WriteLink(p.fd);
      if (!keep) CloseFd(p.fd);
    }
    // Replies queued while processing go out now rather than after the next poll.
    for (auto it = links_.begin(); it != links_.end();) {
      const int fd = it->first;
      const bool ok = it->second.connecting || it->second.handshaking || WriteLink(fd);
      ++it;
      if (!ok) CloseFd(fd);
    }
    DropLateHandshakes();
    if (NowMs() >= next_cron) {
      next_cron = NowMs() + 100;
      c_.Cron();
      DrainClosed();
      for (auto& [name, n] : c_.nodes_) {
        if (n->link < 0 && !(n->flags & (kFlagMyself | kFlagNoAddr)) && !n->ip.empty()) {
          Connect(n.get());
        }
      }
    }
  }
}

}  // namespace sluice::server::cluster
