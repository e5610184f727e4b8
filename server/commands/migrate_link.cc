#include "server/commands/migrate_link.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <utility>

namespace sluice::server {

namespace {

// Waits until fd is ready for `events` or the deadline passes.
bool WaitFor(int fd, short events, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, static_cast<int>(left));
    if (n > 0) return (p.revents & (events | POLLHUP | POLLERR)) != 0;
    if (n < 0 && errno != EINTR) return false;
  }
}

std::chrono::steady_clock::time_point DeadlineIn(int timeout_ms) {
  return std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
}

// A non-blocking connect to one address, waited for until the deadline. As Redis, a socket
// that became ready counts as connected even when the connection was refused: that error
// surfaces on the first write ("error or timeout writing to target instance").
int ConnectOne(const addrinfo* ai, std::chrono::steady_clock::time_point deadline) {
  int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
  if (fd < 0) return -1;
  if (::connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) return fd;
  if (errno == EINPROGRESS && WaitFor(fd, POLLOUT, deadline)) return fd;
  ::close(fd);
  return -1;
}

}  // namespace

MigrateLink::~MigrateLink() { Close(); }

MigrateLink::MigrateLink(MigrateLink&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      timed_out_(other.timed_out_),
      pending_(std::move(other.pending_)) {}

MigrateLink& MigrateLink::operator=(MigrateLink&& other) noexcept {
  if (this != &other) {
    Close();
    fd_ = std::exchange(other.fd_, -1);
    timed_out_ = other.timed_out_;
    pending_ = std::move(other.pending_);
  }
  return *this;
}

void MigrateLink::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  pending_.clear();
}

bool MigrateLink::Connect(const std::string& host, const std::string& port, int timeout_ms) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  timed_out_ = false;
  if (::getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0) return false;
  const auto deadline = DeadlineIn(timeout_ms);
  for (const addrinfo* ai = found; ai != nullptr && fd_ < 0; ai = ai->ai_next) {
    fd_ = ConnectOne(ai, deadline);
  }
  ::freeaddrinfo(found);
  return fd_ >= 0;
}

bool MigrateLink::WriteAll(std::string_view bytes, int timeout_ms) {
  timed_out_ = false;
  const auto deadline = DeadlineIn(timeout_ms);
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n > 0) {
      bytes.remove_prefix(static_cast<size_t>(n));
    } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
      return false;
    } else if (!WaitFor(fd_, POLLOUT, deadline)) {
      timed_out_ = std::chrono::steady_clock::now() >= deadline;
      return false;
    }
  }
  return true;
}

bool MigrateLink::ReadLine(std::string* line, int timeout_ms) {
  timed_out_ = false;
  const auto deadline = DeadlineIn(timeout_ms);
  for (;;) {
    const size_t end = pending_.find("\r\n");
    if (end != std::string::npos) {
      line->assign(pending_, 0, end);
      pending_.erase(0, end + 2);
      return true;
    }
    char buf[4096];
    const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
    if (n > 0) {
      pending_.append(buf, static_cast<size_t>(n));
    } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
      return false;
    } else if (!WaitFor(fd_, POLLIN, deadline)) {
      timed_out_ = std::chrono::steady_clock::now() >= deadline;
      return false;
    }
  }
}

void AppendCommand(const std::vector<std::string_view>& args, std::string* out) {
  *out += "*" + std::to_string(args.size()) + "\r\n";
  for (std::string_view a : args) {
    *out += "$" + std::to_string(a.size()) + "\r\n";
    out->append(a);
    *out += "\r\n";
  }
}

}  // namespace sluice::server
