// One client connection. Reads into a buffer, parses every complete command of the read
// (pipelining), dispatches them in order with their replies appended to one output buffer, then
// hands the batch to its thread's IoRound (server/net/io_round.h), which makes every batch of the
// round durable at once (its units defer durability; the round's plain data commands are one
// RocksDB write; one write(2) hands the WAL bytes to the OS; with appendfsync always the
// connection waits, without blocking its thread, for the store's group fsync; if the write or
// the flush fails, each command of a batch that wrote gets the store's error, MISCONF, instead
// of its reply), then writes the batch's replies and reads again only once they are all written
// (backpressure: a client that does not read its replies is not read either). A batch stops once
// its replies reach kBatchReplyBytes; the commands left in the read buffer run after those replies
// are written, so the replies a client has not read stay bounded by about one reply. Buffers are
// reused: no heap allocation per command in steady state.
//
// Blocking commands (server/core/blocking.h): a command that parks its client stops the batch; the
// connection keeps reading (to notice a disconnect; into a buffer of its own) but runs nothing more
// until the parked command's event (a wake, its timeout, CLIENT UNBLOCK) arrives while no write or
// durability wait is in flight; then the command runs again as a batch of its own (ResumeBlocked).
//
// Pub/sub: publishers on any thread append messages to the client's ClientOutbox and wake the
// connection on its thread (OnPush); the queued messages are written when no write or durability
// wait is in flight, and moved into the batch's replies before each command runs (so a message
// published before a command comes before its reply). A read that completes while pushes are
// being written runs its commands once they are written.
//
// Limits (server/core/config.h): client-query-buffer-limit bounds the unparsed input;
// client-output-buffer-limit's normal class (pubsub for a subscribed client, its queued messages
// included) bounds the pending replies (over hard: closed at once; over soft for longer than its
// seconds: closed by a timer). Both are logged and counted
// in INFO stats.
//
// TLS (EnableTls): the same connection over server/net/tls_stream.h's stream; the plain path
// stays a direct socket read or write (one test of a pointer).
//
// Threading: a Connection lives on one io_context (one I/O thread); every method except
// RequestClose() must run on that thread. Owned by shared_ptr: pending asio handlers keep it
// alive.
#pragma once

#include <asio.hpp>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "protocol/reply_writer.h"
#include "protocol/request_parser.h"
#include "server/core/blocked_command.h"
#include "server/core/client_buffers.h"
#include "server/core/client_state.h"
#include "server/core/dispatcher.h"
#include "server/core/stat_counter.h"
#include "sluice/status.h"

namespace asio::ssl {
class context;
}  // namespace asio::ssl

namespace sluice {
class CommitGroup;
class Store;
}  // namespace sluice

namespace sluice::server {

class IoRound;
class ServerState;
class ThreadConnections;
class TlsStream;

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  // A batch stops running commands once its replies reach this many bytes.
  static constexpr size_t kBatchReplyBytes = 256 * 1024;

  // `round`: the IoRound of the socket's io_context; `peers`: that context's connections, which
  // this one joins in Start() (server/net/busy_serving.h).
  Connection(asio::ip::tcp::socket socket, Store& store, ServerState& server,
             const Dispatcher& dispatcher, IoRound& round,
             std::shared_ptr<ThreadConnections> peers);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Makes this a TLS connection (server/net/tls_stream.h): Start() runs the handshake (on the
  // connection's thread, bounded by a timer) before the first read, and every read and write
  // goes through TLS. Call before Start().
  void EnableTls(std::shared_ptr<asio::ssl::context> context, TlsAuthClients auth);

  // Registers the client (CLIENT LIST/KILL, counted for maxclients at once) and starts reading
  // on the connection's own thread (after the TLS handshake, for a TLS connection). Call once,
  // from any thread, before anything else.
  void Start();

  // Thread-safe. Closes the connection on its own thread once the write in flight (if any) has
  // completed, so replies already produced are delivered. Used by CLIENT KILL, the idle
  // timeout and shutdown.
  void RequestClose();

  ClientState& client() { return client_; }

  // Busy serving (server/net/busy_serving.h): called on the control thread, inside
  // RunningScripts::ServeWhileBusyOn, while this connection's own thread runs a busy script.
  // When the connection waits for input with nothing in flight (not in a batch, no reply,
  // parked command, pause, partial command or queued message), runs the complete commands the
  // socket holds (peeked, then consumed), as the dispatcher answers them while a script is busy,
  // and sends their replies (what the socket does not take at once is queued in the client's
  // outbox for this connection's thread). Stops before an allow_busy command with keys (WATCH:
  // it would wait for the script's key locks). Plain connections only: a TLS one waits for its
  // thread.
  void ServeWhileThreadBusy();

  // Called by the IoRound this connection's batch joined, on this thread, once the round's
  // writes are durable (status OK) or not; `write_failed`: the round's group write failed.
  // `continue_later` (IoRound::DeliverWhileBusy, from a busy script's hook): sends the replies
  // but runs nothing more now; the connection goes on in a handler of its own.
  void RoundDone(const Status& status, bool write_failed, bool continue_later = false);

 private:
  // The TLS handshake's end: reads on, or logs `error` and closes.
  void OnHandshake(const std::string& error);
  // One read or write on the socket, or through TLS when enabled.
  template <typename Handler>
  void ReadSome(asio::mutable_buffer buffer, Handler&& handler);
  template <typename Handler>
  void WriteSome(asio::const_buffer buffer, Handler&& handler);
  void Read();
  void ReadPlain();
  void ArmReadWait();
  void OnRead(const std::error_code& ec, size_t n);
  // While parked: reads into parked_in_ (never into in_, which resuming compacts), then appends
  // to in_; the commands run once the client is unblocked.
  void ReadWhileParked();
  void OnReadWhileParked(const std::error_code& ec, size_t n);
  // Runs every complete command in the read buffer; appends replies to out_.
  void ProcessBatch();
  bool RunBatchCommands();
  // Joins the batch to the thread's IoRound, which makes it durable with the round's other
  // batches and then continues in RoundDone / AfterDurable.
  void FinishBatch();
  void AfterDurable(Status flushed, bool continue_later = false);
  // Applies the server's current parser limits; true when they changed.
  bool UpdateParserLimits();
  // The limits a parser of this client's input has now (authenticated or not, proto-max-bulk-len).
  protocol::ParserLimits CurrentParserLimits() const;
  // Store::PrefetchKeys for the keys of the complete commands from `offset` on (at most 16
  // keys), when there are at least two: their lookups' cache misses overlap instead of
  // stalling one command after another. Sets prefetched_until_ past the commands it parsed, and
  // keeps their arguments (ahead_) so that the command loop does not parse them again.
  void PrefetchAhead(size_t offset);
  // The command PrefetchAhead parsed at `offset`, if any: its arguments and length.
  bool TakeParsedAhead(size_t offset, Args* args, size_t* consumed);
  // Dispatches one command; its reply goes to `out`.
  void RunCommand(protocol::ReplyWriter& out, Args args);
  // CLIENT REPLY OFF|SKIP: drops what the command just wrote from reply_start on, when the
  // client's reply mode says so, and moves SKIP on by one command. True when it dropped. As in
  // Redis 7.0, (un)subscribe confirmations are pushes, sent whatever the reply mode: a command
  // of that family (`args`) keeps what it wrote unless it is an error.
  bool DropSuppressedReply(std::string& replies, size_t reply_start, Args args);
  // CLIENT PAUSE: true when the command must wait (it stays unread, with what follows it).
  bool HeldByPause(Args args);
  // SLOWLOG: records the command that began at `start` when it was slow enough.
  void WaitForPause();
  // CLIENT LIST's buffer fields (server/core/client_buffers.h) as of now; `argv_mem`: the
  // argument bytes of the command about to run (0 between commands).
  void PublishBuffers(size_t argv_mem);
  void CompactReadBuffer();
  // Where the connection goes once no write or durability wait is in flight: close, resume a
  // parked command with an event, run input left over, or read.
  void Continue();
  // A blocking command's event, posted to this thread (BlockedCommand::Notify).
  void OnBlockEvent(uint64_t gen, BlockEvent event);
  // Runs the parked command's event as a batch of its own (its reply made durable as usual).
  void ResumeBlocked();
  // A publisher queued messages in the client's outbox (any thread posts this to ours): write
  // them now when idle, else once the connection continues.
  void OnPush();
  // Moves the outbox's messages to the pending replies and writes them (or reads on).
  void WritePushes();
  void Write();
  void WritePlain();
  void OnWrite(const std::error_code& ec, size_t n);
  // Checks the pending replies against client-output-buffer-limit; closes the connection (and
  // returns true) when over it. Arms or disarms the soft-limit timer.
  bool OverOutputLimit();
  void OnSoftLimitTimer(const std::error_code& ec);
  // Closes at once, dropping unwritten replies (a write in flight is aborted).
  void Drop(const std::string& why, StatCounter& counter);
  // Closes now (unregistered at once); a TLS connection sends close_notify first unless a write
  // is being aborted, and its socket closes when that ends (TlsStream::Shutdown, bounded).
  void CloseNow();
  // Counts this client in (or out of) the clients a pause holds.
  void SetHeldByPause(bool held);
  // Leaves the client list, the blocking registry, pub/sub, MONITOR and tracking (idempotent).
  void LeaveRegistries();
  void CloseSocket();

  asio::ip::tcp::socket socket_;
  std::unique_ptr<TlsStream> tls_;  // over socket_ when a TLS connection; else nullptr
  Store& store_;
  ServerState& server_;
  const Dispatcher& dispatcher_;
  IoRound& round_;
  std::shared_ptr<ThreadConnections> peers_;  // shared: this may outlive the server
  ClientState client_;
  ClientBuffers buffers_;     // published for CLIENT LIST (PublishBuffers)
  size_t reply_peak_ = 0;     // the most bytes out_ held: rbp=
  size_t multi_counted_ = 0;  // MULTI commands already summed into multi_mem_
  size_t multi_mem_ = 0;      // Redis's mstate.argv_len_sums for them
  BlockedCommand blocked_;    // the parked blocking command, if any
  protocol::RequestParser parser_;
  protocol::RequestParser lookahead_;  // PrefetchAhead's: parses ahead of parser_
  size_t prefetched_until_ = 0;        // in the current batch's read buffer
  std::vector<int> key_positions_;     // PrefetchAhead's scratch
  // Multibulk commands PrefetchAhead parsed, in buffer order, with their arguments (views into
  // in_, which stays put while the batch runs; inline commands' arguments live in the parser
  // and are not kept). Valid for the current batch and parser limits only.
  struct ParsedAhead {
    size_t offset;    // in in_
    size_t consumed;  // the command's bytes
    size_t first_arg;
    size_t n_args;
  };
  std::vector<ParsedAhead> ahead_;
  std::vector<std::string_view> ahead_args_;
  size_t ahead_next_ = 0;  // ahead_'s first entry not yet taken
  bool limits_unauthenticated_ = false;
  int64_t limits_max_bulk_ = 0;

  std::vector<char> in_;  // read buffer: [0, in_len_) holds unparsed bytes
  size_t in_len_ = 0;
  std::vector<char> parked_in_;  // ReadWhileParked's buffer
  std::string out_;              // replies of the current batch
  size_t out_sent_ = 0;          // bytes of out_ already written
  uint64_t batch_seq_ = 0;       // the store's sequence number when the batch began
  size_t batch_replies_ = 0;     // replies the batch produced (one per command)
  bool batch_wrote_ = false;     // the sequence number moved since the batch began
  // The round's commit group (plain data commands share one RocksDB write), during ProcessBatch.
  CommitGroup* group_ = nullptr;
  bool more_input_ = false;  // commands left in the read buffer (batch bound, read while busy)
  asio::steady_timer soft_limit_timer_;
  // CLIENT PAUSE: the real ms until which the next command waits (0: none), and the timer that
  // looks again (at the end, or every kPausePollMs for an earlier CLIENT UNPAUSE).
  int64_t paused_until_ms_ = 0;
  bool held_by_pause_ = false;  // counted in ServerState::held_by_pause (blocked_clients)
  asio::steady_timer pause_timer_;
  std::chrono::steady_clock::time_point soft_limit_since_{};  // epoch: not over the soft limit
  bool writing_ = false;
  bool written_ = false;  // writing_, and every byte has left: OnWrite is posted
  bool reading_ = false;  // a read is in flight (one at a time)
  // ReadPlain's readiness wait: armed (pending), fired since the last read (readable_), and
  // whether a read waits for it (want_read_).
  bool read_wait_armed_ = false;
  bool readable_ = false;
  bool want_read_ = false;
  bool awaiting_durable_ = false;  // joined to the round, waiting for its durability
  bool close_when_idle_ = false;   // RequestClose() arrived while a write was in flight
  bool registered_ = false;
  bool closed_ = false;
};

}  // namespace sluice::server
