#include "server/net/busy_serving.h"

#include <chrono>

#include "server/core/running_scripts.h"
#include "server/net/connection.h"

namespace sluice::server {

void ThreadConnections::Add(const std::shared_ptr<Connection>& connection) {
  std::lock_guard<std::mutex> lock(mu_);
  connections_[connection.get()] = connection;
}

void ThreadConnections::Remove(const Connection* connection) {
  std::lock_guard<std::mutex> lock(mu_);
  connections_.erase(connection);
}

std::vector<std::shared_ptr<Connection>> ThreadConnections::Snapshot() const {
  std::vector<std::shared_ptr<Connection>> alive;
  std::lock_guard<std::mutex> lock(mu_);
  alive.reserve(connections_.size());
  for (const auto& [raw, weak] : connections_) {
    if (auto c = weak.lock()) alive.push_back(std::move(c));
  }
  return alive;
}

BusyServing::BusyServing(asio::io_context& control, RunningScripts& scripts,
                         const std::vector<std::thread::id>& threads, size_t contexts)
    : control_(control), scripts_(scripts), threads_(threads), timer_(control) {
  for (size_t i = 0; i < contexts; ++i) {
    connections_.push_back(std::make_shared<ThreadConnections>());
  }
}

void BusyServing::Wake() {
  asio::post(control_, [this] {
    if (ticking_) return;
    ticking_ = true;
    Tick();
  });
}

void BusyServing::Tick() {
  bool busy = false;
  for (size_t i = 0; i < threads_.size() && i < connections_.size(); ++i) {
    busy |= scripts_.ServeWhileBusyOn(threads_[i], [&] {
      for (const std::shared_ptr<Connection>& c : connections_[i]->Snapshot()) {
        c->ServeWhileThreadBusy();
      }
    });
  }
  if (!busy) {
    ticking_ = false;
    return;
  }
  timer_.expires_after(std::chrono::milliseconds(kPollMs));
  timer_.async_wait([this](const std::error_code& ec) {
    if (ec) {
      ticking_ = false;
      return;
    }
    Tick();
  });
}

}  // namespace sluice::server
