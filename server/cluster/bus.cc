// The cluster bus's poll loop: see bus.h.
#include "server/cluster/bus.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "server/core/logging.h"

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
  thread_ = std::thread([this] { Loop(); });
}

void Bus::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  for (int fd : listen_fds_) close(fd);
  listen_fds_.clear();
  for (auto& [fd, link] : links_) close(fd);
  links_.clear();
}

void Bus::CloseFd(int fd) {
  auto it = links_.find(fd);
  if (it == links_.end()) return;
  if (it->second.node != nullptr && it->second.node->link == fd) it->second.node->link = -1;
  c_.outbox_.erase(fd);
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
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n > 0) {
      link.rbuf.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n == 0) return false;
    if (errno == EAGAIN || errno == EWOULDBLOCK) break;
    if (errno == EINTR) continue;
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
  ssize_t n = write(fd, it->second.data(), it->second.size());
  if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
  it->second.erase(0, static_cast<size_t>(n));
  if (it->second.empty()) c_.outbox_.erase(it);
  return true;
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
  int64_t next_cron = NowMs();
  std::vector<pollfd> pfds;
  while (!stop_) {
    pfds.clear();
    {
      std::lock_guard lock(c_.mu_);
      DrainClosed();
      for (int fd : listen_fds_) pfds.push_back({fd, POLLIN, 0});
      for (auto& [fd, link] : links_) {
        short events = POLLIN;
        auto out = c_.outbox_.find(fd);
        if (link.connecting || (out != c_.outbox_.end() && !out->second.empty())) events |= POLLOUT;
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
      }
      if (keep && (p.revents & (POLLIN | POLLHUP | POLLERR))) keep = ReadLink(p.fd);
      if (keep && links_.count(p.fd) && (p.revents & POLLOUT)) keep = WriteLink(p.fd);
      if (!keep) CloseFd(p.fd);
    }
    // Replies queued while processing go out now rather than after the next poll.
    for (auto it = links_.begin(); it != links_.end();) {
      const int fd = it->first;
      const bool ok = it->second.connecting || WriteLink(fd);
      ++it;
      if (!ok) CloseFd(fd);
    }
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
