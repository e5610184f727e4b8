// Room server/net: the listener, its I/O threads and the connections. Over the server core: it
// runs whatever the dispatcher finds and knows no command family.
//
// The network server: N I/O threads, one asio::io_context each; listeners on every configured
// address, connections handed to the I/O threads round robin (passing over a thread busy with
// a script); maxclients; the idle-timeout
// sweep; SIGINT/SIGTERM; clean shutdown. Accepting, signals and the sweep run on a control
// thread of their own, so a busy script on an I/O thread does not stop new clients from
// connecting (to get -BUSY, or to send SCRIPT KILL) or a signal from being handled; the only
// commands it runs are those of the busy thread's other clients (server/net/busy_serving.h),
// which get -BUSY or are allow_busy commands.
//
// Shutdown (signal, SHUTDOWN or Stop()): stop accepting, ask every connection to close once
// its in-flight reply has been written and every busy script that has not written to stop (as
// SCRIPT KILL would), wait for them (at most kShutdownGrace), then stop the threads. Run()
// returns after that; the caller then closes the Store (which syncs). A busy script that has
// written keeps its I/O thread, and so Run(), until it ends, as on Redis; after SHUTDOWN NOSAVE
// the process exits at the end of the grace period instead (ExitWithoutBusyScript).
#pragma once

#include <asio.hpp>
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "server/core/config.h"
#include "server/core/dispatcher.h"
#include "server/core/listen_hook.h"
#include "server/net/busy_serving.h"
#include "server/net/tls_context.h"
#include "sluice/status.h"

namespace sluice {
class Store;
}

namespace sluice::server {

class IoRound;
class ServerState;

class Server {
 public:
  static constexpr std::chrono::seconds kShutdownGrace{5};

  // All referenced objects must outlive the Server.
  Server(Store& store, ServerState& state, const CommandTable& table);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds every address of the configuration (a "-" prefix marks an address as optional, as
  // in redis.conf) on `port`, and on `tls-port` for TLS (with port 0 and a tls-port, TLS only).
  // On failure returns kIOError with a message naming the address; a TLS context that cannot
  // be built (its reason logged) fails it too.
  Status Listen();
  // The addresses actually bound ("127.0.0.1:6379", "127.0.0.1:6380 (TLS)"), after Listen().
  std::vector<std::string> ListeningAddresses() const;
  int bound_port() const { return bound_port_; }          // plain TCP; 0 when TLS only
  int tls_bound_port() const { return tls_bound_port_; }  // 0 when no TLS listener

  // Serves until stopped; uses the calling thread as I/O thread 0 and starts the others and the
  // control thread. Installs SIGINT/SIGTERM handlers.
  void Run();
  // Thread-safe and idempotent: begins the shutdown described above.
  void Stop();

 private:
  // One listening socket and its accept back-off. Used on the control thread only.
  struct Listener {
    Listener(asio::io_context& io, bool tls_port) : acceptor(io), pause(io), tls(tls_port) {}
    asio::ip::tcp::acceptor acceptor;
    asio::steady_timer pause;              // accepting resumes when it fires
    bool tls;                              // the tls-port: connections speak TLS
    int64_t failures = 0;                  // failed accepts since the last success
    std::chrono::milliseconds backoff{0};  // the current pause
  };

  // Binds every configured address on `port` (0: a free port, the same for every address) into
  // new listeners appended to `out`; sets *bound to the port bound.
  Status ListenOn(const Config& config, int port, bool tls, int* bound,
                  std::vector<std::unique_ptr<Listener>>& out);
  // ServerState's TLS hook (CONFIG SET tls-*): the context (TlsContexts::Apply), then the TLS
  // listener when tls.port changed. Called with the configuration lock held, so one at a time.
  TlsApplyResult ApplyTls(const TlsConfig& tls, bool reload);
  // On the control thread: listens on `port` for TLS (0: not at all) instead of the current TLS
  // listeners, which are closed once the new ones are bound; false (logged, nothing changed)
  // when they cannot be.
  bool MoveTlsListener(int port);
  // CONFIG SET port / bind (server/core/listen_hook.h): moves the listeners on the control
  // thread while the caller (holding the configuration lock) waits.
  ListenApplyResult ApplyListen(int port, const std::vector<std::string>& bind);
  // On the control thread: the plain listeners on `port` (0: none) and, when the addresses
  // change, the TLS ones too, at `bind`. New listeners are bound before the old ones close; when
  // an address is in both (the same port), the old ones close first and come back on failure.
  // The failure (logged) when the new ones cannot be bound: the old ones then keep listening.
  ListenApplyResult MoveListeners(int port, const std::vector<std::string>& bind);
  // Binds `config`'s plain (port) and, with `with_tls`, TLS (tls_bound_port_) listeners into
  // `fresh`; *bound: the plain port bound (0 when port is 0).
  Status ListenAll(const Config& config, int port, bool with_tls, int* bound,
                   std::vector<std::unique_ptr<Listener>>& fresh);
  // Closes the listeners of one kind (plain or TLS) into retired_.
  void RetireListeners(bool tls);
  void Accept(Listener& listener);
  // `socket` was accepted onto the control context; a served one moves to NextContext()'s.
  void OnAccepted(Listener& listener, const std::error_code& ec, asio::ip::tcp::socket socket);
  size_t NextContext();
  static std::optional<asio::ip::tcp::socket> MoveToContext(asio::ip::tcp::socket socket,
                                                            asio::io_context& context);
  void PauseAccepting(Listener& listener, const std::error_code& ec);
  // Protected mode: no requirepass and the peer is not a loopback address.
  bool Refused(const asio::ip::tcp::socket& socket) const;
  // Writes `why` (an error reply) to a fresh socket and closes it; counts rejected_connections.
  // On the tls-port nothing is written (no handshake was made: as Redis, the connection just
  // drops).
  void Reject(asio::ip::tcp::socket socket, const Status& why, bool tls);
  // Logs a warning for each non-loopback listener when no requirepass is set.
  void WarnIfExposed() const;
  void ScheduleSweep();
  void SweepIdleClients();
  void BeginShutdown();
  // Asks busy scripts and functions that have not written to stop (SCRIPT KILL's rule).
  void StopKillableScripts();
  [[noreturn]] void ExitWithoutBusyScript();
  void WaitForClients(std::chrono::steady_clock::time_point deadline);

  Store& store_;
  ServerState& state_;
  Dispatcher dispatcher_;
  std::vector<std::unique_ptr<asio::io_context>> contexts_;
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> guards_;
  // Listeners, signals and timers: declared after contexts_, so destroyed before them.
  asio::io_context control_{1};
  asio::executor_work_guard<asio::io_context::executor_type> control_guard_;
  std::vector<std::unique_ptr<IoRound>> rounds_;  // one per io_context, same index
  std::vector<std::thread::id> context_threads_;  // the thread running each, same index
  BusyServing busy_;  // answers a busy script's thread's clients (on the control thread)
  std::vector<std::unique_ptr<Listener>> listeners_;
  asio::signal_set signals_;
  asio::steady_timer sweep_timer_;
  asio::steady_timer shutdown_timer_;
  size_t next_context_ = 0;
  int bound_port_ = 0;
  int tls_bound_port_ = 0;
  Config listen_config_;  // the configuration Listen() used: bind addresses, port
  int tls_port_ = 0;      // the tls-port configured now (ApplyTls; under the config lock)
  // Closed TLS listeners (CONFIG SET tls-port): kept, their aborted accepts may still refer to
  // them. Control thread only.
  std::vector<std::unique_ptr<Listener>> retired_;
  TlsContexts tls_;  // the context of new TLS connections (CONFIG SET reloads it)
  std::atomic<bool> stopping_{false};
  bool unkillable_logged_ = false;  // the shutdown's wait for a script that wrote: logged once
};

}  // namespace sluice::server
