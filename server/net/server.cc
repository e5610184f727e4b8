#include "server/net/server.h"

#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <future>
#include <optional>
#include <utility>

#include "protocol/reply_writer.h"
#include "server/core/crash_report.h"
#include "server/core/errors.h"
#include "server/core/logging.h"
#include "server/core/pause_purposes.h"
#include "server/core/server_state.h"
#include "server/net/connection.h"
#include "server/net/io_round.h"
#include "sluice/store.h"

namespace sluice::server {

namespace {

std::vector<std::unique_ptr<asio::io_context>> MakeContexts(int n) {
  std::vector<std::unique_ptr<asio::io_context>> contexts;
  for (int i = 0; i < n; ++i) contexts.push_back(std::make_unique<asio::io_context>(1));
  return contexts;
}

// redis.conf spellings: "*" is every IPv4 address, "::*" every IPv6 address.
std::string NormalizeAddress(std::string address) {
  if (address == "*") return "0.0.0.0";
  if (address == "::*") return "::";
  return address;
}

std::string EndpointText(const asio::ip::tcp::endpoint& ep) {
  std::string host = ep.address().to_string();
  if (ep.address().is_v6()) host = "[" + host + "]";
  return host + ":" + std::to_string(ep.port());
}

bool IsLoopback(const asio::ip::address& a) {
  if (a.is_v6() && a.to_v6().is_v4_mapped()) {
    return asio::ip::make_address_v4(asio::ip::v4_mapped, a.to_v6()).is_loopback();
  }
  return a.is_loopback();
}

}  // namespace

Server::Server(Store& store, ServerState& state, const CommandTable& table)
    : store_(store),
      state_(state),
      dispatcher_(table),
      contexts_(MakeContexts(state.config().EffectiveThreads())),
      control_guard_(asio::make_work_guard(control_)),
      busy_(control_, state.running_scripts(), context_threads_, contexts_.size()),
      signals_(control_),
      sweep_timer_(control_),
      shutdown_timer_(control_) {
  for (auto& context : contexts_) {
    guards_.push_back(asio::make_work_guard(*context));
    rounds_.push_back(std::make_unique<IoRound>(*context, store_));
  }
  // As Redis: no expired key is removed while clients are paused (a failover's pause then
  // writes nothing the new primary would miss).
  state_.set_pause_listener([&store](bool paused) { store.set_keep_expired_paused(paused); });
  // On the busy script's own thread (its Lua hook).
  state_.running_scripts().set_on_busy([this] {
    busy_.Wake();
    for (size_t i = 0; i < context_threads_.size(); ++i) {
      if (context_threads_[i] == std::this_thread::get_id()) rounds_[i]->DeliverWhileBusy();
    }
  });
  state_.set_tls_apply([this](const TlsConfig& tls, bool reload) { return ApplyTls(tls, reload); });
  SetListenApply(
      [this](int port, const std::vector<std::string>& bind) { return ApplyListen(port, bind); });
}

// Members go in reverse order: timers and acceptors before the io_contexts they use; the
// io_contexts last, destroying the connections their pending handlers still hold.
Server::~Server() {
  state_.running_scripts().set_on_busy(nullptr);
  state_.set_tls_apply(nullptr);
  SetListenApply(nullptr);
}

Status Server::Listen() {
  Config config = state_.config();
  listen_config_ = config;
  tls_port_ = config.tls.port;
  // As Redis: the TLS context is built (and checked) whenever TLS is configured.
  if (!tls_.Apply(config.tls, /*reload=*/false)) {
    return Status::IOError("Failed to configure TLS. Check logs for more info.");
  }
  if (config.port != 0 || config.tls.port == 0) {
    Status s = ListenOn(config, config.port, false, &bound_port_, listeners_);
    if (!s.ok()) return s;
  }
  if (config.tls.port != 0) {
    Status s = ListenOn(config, config.tls.port, true, &tls_bound_port_, listeners_);
    if (!s.ok()) return s;
  }
  if (listeners_.empty()) return Status::IOError("no address to listen on");
  state_.set_tcp_port(bound_port_ != 0 ? bound_port_ : tls_bound_port_);
  WarnIfExposed();
  return Status::Ok();
}

Status Server::ListenOn(const Config& config, int port, bool tls, int* bound,
                        std::vector<std::unique_ptr<Listener>>& out) {
  for (const std::string& configured : config.bind) {
    bool optional = !configured.empty() && configured[0] == '-';
    std::string address = NormalizeAddress(optional ? configured.substr(1) : configured);
    std::error_code ec;
    asio::ip::address ip = asio::ip::make_address(address, ec);
    if (ec) {
      if (optional) continue;
      return Status::IOError("invalid bind address '" + configured + "'");
    }
    asio::ip::tcp::endpoint endpoint(ip, static_cast<uint16_t>(*bound != 0 ? *bound : port));
    auto listener = std::make_unique<Listener>(control_, tls);
    asio::ip::tcp::acceptor* acceptor = &listener->acceptor;
    acceptor->open(endpoint.protocol(), ec);
    if (!ec) acceptor->set_option(asio::ip::tcp::acceptor::reuse_address(true), ec);
    if (!ec && ip.is_v6()) acceptor->set_option(asio::ip::v6_only(true), ec);
    if (!ec) acceptor->bind(endpoint, ec);
    if (!ec) acceptor->listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      if (optional) continue;
      return Status::IOError("cannot listen on " + EndpointText(endpoint) + ": " + ec.message());
    }
    // With port 0 the first listener picks a free port; the others use the same one.
    *bound = acceptor->local_endpoint().port();
    out.push_back(std::move(listener));
  }
  return Status::Ok();
}

TlsApplyResult Server::ApplyTls(const TlsConfig& tls, bool reload) {
  if (!tls_.Apply(tls, reload)) return TlsApplyResult::kContextFailed;
  if (tls.port == tls_port_) return TlsApplyResult::kOk;
  // The listeners belong to the control thread (which never takes the configuration lock held
  // here): it moves them while this thread waits, at most a few seconds (shutdown).
  auto moved = std::make_shared<std::promise<bool>>();
  std::future<bool> done = moved->get_future();
  asio::post(control_, [this, moved, port = tls.port] { moved->set_value(MoveTlsListener(port)); });
  if (done.wait_for(std::chrono::seconds(5)) != std::future_status::ready || !done.get()) {
    return TlsApplyResult::kListenFailed;
  }
  tls_port_ = tls.port;
  return TlsApplyResult::kOk;
}

ListenApplyResult Server::ApplyListen(int port, const std::vector<std::string>& bind) {
  auto moved = std::make_shared<std::promise<ListenApplyResult>>();
  std::future<ListenApplyResult> done = moved->get_future();
  asio::post(control_, [this, moved, port, bind] { moved->set_value(MoveListeners(port, bind)); });
  if (done.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
    return ListenApplyResult::kPortFailed;
  }
  return done.get();
}

Status Server::ListenAll(const Config& config, int port, bool with_tls, int* bound,
                         std::vector<std::unique_ptr<Listener>>& fresh) {
  *bound = 0;
  if (port != 0) {
    Status s = ListenOn(config, port, false, bound, fresh);
    if (!s.ok()) return s;
  }
  if (with_tls && tls_bound_port_ != 0) {
    int tls_bound = tls_bound_port_;
    Status s = ListenOn(config, tls_bound_port_, true, &tls_bound, fresh);
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

void Server::RetireListeners(bool tls) {
  std::error_code ec;
  for (auto it = listeners_.begin(); it != listeners_.end();) {
    if ((*it)->tls != tls) {
      ++it;
      continue;
    }
    (*it)->acceptor.close(ec);
    (*it)->pause.cancel();
    retired_.push_back(std::move(*it));
    it = listeners_.erase(it);
  }
}

ListenApplyResult Server::MoveListeners(int port, const std::vector<std::string>& bind) {
  const bool rebind = bind != listen_config_.bind;
  const ListenApplyResult failed =
      rebind ? ListenApplyResult::kBindFailed : ListenApplyResult::kPortFailed;
  if (stopping_.load(std::memory_order_acquire)) return failed;
  Config next = listen_config_;
  next.port = port;
  next.bind = bind;
  std::vector<std::unique_ptr<Listener>> fresh;
  int bound = 0;
  Status s = ListenAll(next, port, rebind, &bound, fresh);
  if (!s.ok() && rebind) {
    // An address in both lists is still held by the old listener: close first, then retry.
    fresh.clear();
    RetireListeners(false);
    RetireListeners(true);
    s = ListenAll(next, port, true, &bound, fresh);
    if (!s.ok()) {
      fresh.clear();
      int old_bound = 0;
      Status back = ListenAll(listen_config_, bound_port_, true, &old_bound, fresh);
      if (!back.ok())
        LogError("CONFIG SET bind: the old listeners came back partly: " + back.message());
      for (auto& listener : fresh) {
        Accept(*listener);
        listeners_.push_back(std::move(listener));
      }
      LogError("CONFIG SET bind: " + s.message());
      return failed;
    }
  } else if (!s.ok()) {
    LogError("CONFIG SET port " + std::to_string(port) + ": " + s.message());
    return failed;  // the fresh listeners close as they go
  }
  RetireListeners(false);
  if (rebind) RetireListeners(true);
  for (auto& listener : fresh) {
    Accept(*listener);
    listeners_.push_back(std::move(listener));
  }
  bound_port_ = bound;
  listen_config_ = next;
  state_.set_tcp_port(bound_port_ != 0 ? bound_port_ : tls_bound_port_);
  LogInfo(bound_port_ == 0 ? std::string("No longer listening for plain TCP connections")
                           : "Listening on port " + std::to_string(bound_port_));
  WarnIfExposed();
  return ListenApplyResult::kOk;
}

bool Server::MoveTlsListener(int port) {
  if (stopping_.load(std::memory_order_acquire)) return false;
  std::vector<std::unique_ptr<Listener>> fresh;
  int bound = 0;
  if (port != 0) {
    Status s = ListenOn(listen_config_, port, true, &bound, fresh);
    if (s.ok() && fresh.empty()) s = Status::IOError("no address to listen on");
    if (!s.ok()) {
      LogError("tls-port " + std::to_string(port) + ": " + s.message());
      return false;  // the fresh listeners close as they go
    }
  }
  RetireListeners(/*tls=*/true);
  for (auto& listener : fresh) {
    Accept(*listener);
    listeners_.push_back(std::move(listener));
  }
  tls_bound_port_ = bound;
  if (bound_port_ == 0) state_.set_tcp_port(bound);
  LogInfo(port == 0 ? std::string("TLS: no longer listening for TLS connections")
                    : "TLS: listening on port " + std::to_string(bound));
  return true;
}

void Server::WarnIfExposed() const {
  if (state_.requirepass_set()) return;
  for (const auto& listener : listeners_) {
    std::error_code ec;
    auto ep = listener->acceptor.local_endpoint(ec);
    if (ec || IsLoopback(ep.address())) continue;
    LogError("WARNING: listening on " + EndpointText(ep) + " without requirepass: " +
             (state_.protected_mode()
                  ? "protected mode is on, so only loopback clients are served; set "
                    "requirepass to serve other hosts"
                  : "protected mode is off, so every host that reaches this address can read "
                    "and write all data; set requirepass"));
  }
}

std::vector<std::string> Server::ListeningAddresses() const {
  std::vector<std::string> out;
  for (const auto& listener : listeners_) {
    std::error_code ec;
    auto ep = listener->acceptor.local_endpoint(ec);
    if (!ec) out.push_back(EndpointText(ep) + (listener->tls ? " (TLS)" : ""));
  }
  return out;
}

void Server::Run() {
  state_.set_shutdown_hook([this] { Stop(); });
  signals_.add(SIGINT);
  signals_.add(SIGTERM);
  signals_.async_wait([this](const std::error_code& ec, int signo) {
    if (ec) return;
    LogInfo(std::string("received ") + (signo == SIGINT ? "SIGINT" : "SIGTERM") +
            ", shutting down");
    Stop();
  });
  std::signal(SIGPIPE, SIG_IGN);
  for (auto& listener : listeners_) Accept(*listener);
  ScheduleSweep();
  std::vector<std::thread> threads;
  context_threads_.push_back(std::this_thread::get_id());
  for (size_t i = 1; i < contexts_.size(); ++i) {
    threads.emplace_back([context = contexts_[i].get()] {
      InstallCrashAltStackForThisThread();
      context->run();
    });
    context_threads_.push_back(threads.back().get_id());
  }
  threads.emplace_back([this] { control_.run(); });  // last: it reads context_threads_
  contexts_[0]->run();
  for (std::thread& t : threads) t.join();
  state_.set_shutdown_hook(nullptr);
}

void Server::Accept(Listener& listener) {
  listener.acceptor.async_accept(
      [this, &listener](const std::error_code& ec, asio::ip::tcp::socket socket) {
        OnAccepted(listener, ec, std::move(socket));
      });
}

// Round robin over the I/O threads, passing over a thread busy with a script: a client handed
// to it would get no reply (not even -BUSY, nor to SCRIPT KILL) until the script ends.
size_t Server::NextContext() {
  const size_t n = contexts_.size();
  size_t index = next_context_;
  for (size_t tries = 0; tries < n; ++tries) {
    const size_t i = (next_context_ + tries) % n;
    if (!state_.running_scripts().BusyOn(context_threads_[i])) {
      index = i;
      break;
    }
  }
  next_context_ = (index + 1) % n;
  return index;
}

// The same connection, registered with `context`'s reactor instead; nullopt (the connection
// closed) if the system refuses.
std::optional<asio::ip::tcp::socket> Server::MoveToContext(asio::ip::tcp::socket socket,
                                                           asio::io_context& context) {
  std::error_code ec;
  const asio::ip::tcp::endpoint local = socket.local_endpoint(ec);
  if (ec) return std::nullopt;
  const int fd = socket.release(ec);
  if (ec) return std::nullopt;
  asio::ip::tcp::socket moved(context);
  moved.assign(local.protocol(), fd, ec);
  if (ec) {
    ::close(fd);
    return std::nullopt;
  }
  return moved;
}

void Server::OnAccepted(Listener& listener, const std::error_code& ec,
                        asio::ip::tcp::socket socket) {
  if (stopping_.load(std::memory_order_acquire) || ec == asio::error::operation_aborted) return;
  if (ec && ec != asio::error::connection_aborted) return PauseAccepting(listener, ec);
  if (listener.failures > 0) {
    LogInfo("accepting connections again after " + std::to_string(listener.failures) +
            " failed accepts");
    listener.failures = 0;
    listener.backoff = std::chrono::milliseconds(0);
  }
  if (ec) {
    // The peer gave up before we accepted it: nothing to serve.
  } else if (Refused(socket)) {
    Reject(std::move(socket), ProtectedModeDenied(), listener.tls);
  } else if (static_cast<int64_t>(state_.clients().size()) >= state_.maxclients()) {
    Reject(std::move(socket), MaxClientsReached(), listener.tls);
  } else {
    // Accepted on the control thread; served by an I/O thread's io_context from now on.
    const size_t context = NextContext();
    if (auto served = MoveToContext(std::move(socket), *contexts_[context])) {
      auto connection =
          std::make_shared<Connection>(std::move(*served), store_, state_, dispatcher_,
                                       *rounds_[context], busy_.connections(context));
      if (listener.tls) connection->EnableTls(tls_.Current(), tls_.auth_clients());
      connection->Start();
    }
  }
  Accept(listener);
}

// Out of descriptors (EMFILE/ENFILE) or memory, the listening socket stays readable: retrying at
// once would spin a core and flood the log. Waits instead, 10 ms doubling up to 1 s, and logs
// once per burst; waiting clients stay in the kernel's backlog meanwhile.
void Server::PauseAccepting(Listener& listener, const std::error_code& ec) {
  if (listener.failures++ == 0) {
    LogError("accept failed: " + ec.message() +
             "; pausing accepts and retrying with back-off (logged once until an accept "
             "succeeds)");
  }
  listener.backoff = std::min<std::chrono::milliseconds>(
      std::max<std::chrono::milliseconds>(listener.backoff * 2, std::chrono::milliseconds(10)),
      std::chrono::seconds(1));
  listener.pause.expires_after(listener.backoff);
  listener.pause.async_wait([this, &listener](const std::error_code& wait_ec) {
    if (wait_ec || stopping_.load(std::memory_order_acquire)) return;
    Accept(listener);
  });
}

bool Server::Refused(const asio::ip::tcp::socket& socket) const {
  if (!state_.protected_mode() || state_.requirepass_set()) return false;
  std::error_code ec;
  auto remote = socket.remote_endpoint(ec);
  return !ec && !IsLoopback(remote.address());
}

void Server::Reject(asio::ip::tcp::socket socket, const Status& why, bool tls) {
  state_.stats().rejected_connections.fetch_add(1, std::memory_order_relaxed);
  std::error_code ec;
  if (!tls) {
    std::string reply;
    protocol::ReplyWriter out(&reply);
    ReplyError(out, why);
    asio::write(socket, asio::buffer(reply), ec);  // a few bytes into a fresh socket buffer
  }
  socket.close(ec);
}

void Server::ScheduleSweep() {
  sweep_timer_.expires_after(std::chrono::seconds(1));
  sweep_timer_.async_wait([this](const std::error_code& ec) {
    if (ec || stopping_.load(std::memory_order_acquire)) return;
    SweepIdleClients();
    if (state_.MaybePaused()) RefreshPauses(state_);  // a pause whose time is up ends here
    ScheduleSweep();
  });
}

void Server::SweepIdleClients() {
  int64_t timeout_s = state_.timeout_seconds();
  if (timeout_s <= 0) return;
  int64_t now = ServerState::RealNowMs();
  state_.clients().ForEachLocked([&](ClientRegistry::Entry& e) {
    // A blocked or subscribed client is waiting, not idle (as in Redis).
    if (e.client->blocked.load(std::memory_order_relaxed) || e.client->subscribed()) return;
    int64_t last = e.client->last_interaction_ms.load(std::memory_order_relaxed);
    if (now - last > timeout_s * 1000 && e.kill) e.kill();
  });
}

void Server::Stop() {
  if (stopping_.exchange(true)) return;
  asio::post(control_, [this] { BeginShutdown(); });
}

// SHUTDOWN NOSAVE while a script that has written is busy (Redis: "kill the server in a hard
// way"): its I/O thread would never return, so the process ends here. Every committed write is
// synced first; the script's writes were never committed, so none of them is applied.
void Server::ExitWithoutBusyScript() {
  LogError(
      "shutdown: SHUTDOWN NOSAVE: exiting without the busy script (its writes are not "
      "applied)");
  Status synced = store_.SyncWal();
  if (!synced.ok()) LogError("shutdown: syncing the write-ahead log failed: " + synced.message());
  LogInfo("Sluice is now ready to exit, bye bye...");
  std::_Exit(synced.ok() ? 0 : 1);
}

void Server::StopKillableScripts() {
  RunningScripts& running = state_.running_scripts();
  if (running.empty()) return;
  const int64_t now = RunningScripts::SteadyNowMs();
  const int64_t threshold = state_.busy_reply_threshold_ms();
  for (bool functions : {false, true}) {
    if (running.Kill(functions, now, threshold) == RunningScripts::KillResult::kUnkillable &&
        !unkillable_logged_) {
      unkillable_logged_ = true;
      LogError(std::string("shutdown: a busy ") + (functions ? "function" : "script") +
               " has written and cannot be stopped; waiting for it to end");
    }
  }
}

void Server::BeginShutdown() {
  LogInfo("shutdown: no longer accepting connections");
  std::error_code ec;
  for (auto& listener : listeners_) {
    listener->acceptor.close(ec);
    listener->pause.cancel();
  }
  signals_.cancel(ec);
  sweep_timer_.cancel();
  state_.clients().ForEachLocked([](ClientRegistry::Entry& e) {
    if (e.kill) e.kill();
  });
  WaitForClients(std::chrono::steady_clock::now() + kShutdownGrace);
}

// Polls until every connection has closed (their last replies written) or the grace period
// ends, then lets the I/O threads finish.
void Server::WaitForClients(std::chrono::steady_clock::time_point deadline) {
  bool done = state_.clients().size() == 0;
  if (done || std::chrono::steady_clock::now() >= deadline) {
    if (!done && state_.shutdown_abandons_busy_script() && !state_.running_scripts().empty()) {
      ExitWithoutBusyScript();
    }
    if (!done) LogError("shutdown: closing clients that did not finish in time");
    for (auto& guard : guards_) guard.reset();
    for (auto& context : contexts_) context->stop();
    control_guard_.reset();
    control_.stop();
    return;
  }
  StopKillableScripts();  // one may have become busy since the last look
  shutdown_timer_.expires_after(std::chrono::milliseconds(10));
  shutdown_timer_.async_wait(
      [this, deadline](const std::error_code&) { WaitForClients(deadline); });
}

}  // namespace sluice::server
