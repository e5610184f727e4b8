#include "server/net/connection.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <utility>

#include "server/core/args.h"
#include "server/core/cluster_route.h"
#include "server/core/command_stats.h"
#include "server/core/errors.h"
#include "server/core/logging.h"
#include "server/core/replication_hook.h"
#include "server/core/server_state.h"
#include "server/net/busy_serving.h"
#include "server/net/io_round.h"
#include "server/net/tls_stream.h"
#include "sluice/store.h"
#include "sluice/transaction.h"

namespace sluice::server {

namespace {

constexpr size_t kInitialReadBuffer = 16 * 1024;  // Redis's PROTO_IOBUF_LEN
// While parked a client's input only waits (or tells of a disconnect): a small side buffer.
constexpr size_t kParkedReadBuffer = 4 * 1024;
// Buffers grown past these by one large command are released once empty again.
constexpr size_t kKeepReadBuffer = 1024 * 1024;
constexpr size_t kKeepWriteBuffer = 1024 * 1024;

std::string EndpointText(const asio::ip::tcp::endpoint& ep) {
  const asio::ip::address& a = ep.address();
  std::string host = a.is_v6() && a.to_v6().is_v4_mapped()
                         ? asio::ip::make_address_v4(asio::ip::v4_mapped, a.to_v6()).to_string()
                         : a.to_string();
  if (a.is_v6() && !a.to_v6().is_v4_mapped()) host = "[" + host + "]";
  return host + ":" + std::to_string(ep.port());
}

}  // namespace

Connection::Connection(asio::ip::tcp::socket socket, Store& store, ServerState& server,
                       const Dispatcher& dispatcher, IoRound& round,
                       std::shared_ptr<ThreadConnections> peers)
    : socket_(std::move(socket)),
      store_(store),
      server_(server),
      dispatcher_(dispatcher),
      round_(round),
      peers_(std::move(peers)),
      blocked_(socket_.get_executor(), server.blocking(), client_),
      in_(kInitialReadBuffer),
      soft_limit_timer_(socket_.get_executor()),
      pause_timer_(socket_.get_executor()) {
  std::error_code ec;
  client_.id = server_.clients().NextId();
  auto remote = socket_.remote_endpoint(ec);
  if (!ec) client_.addr = EndpointText(remote);
  auto local = socket_.local_endpoint(ec);
  if (!ec) client_.laddr = EndpointText(local);
  client_.fd = socket_.native_handle();
  socket_.non_blocking(true, ec);  // ReadPlain's and WritePlain's calls return would_block
  client_.created_ms = ServerState::RealNowMs();
  client_.last_interaction_ms.store(client_.created_ms, std::memory_order_relaxed);
  client_.authenticated = !server_.requirepass_set();
  socket_.set_option(asio::ip::tcp::no_delay(true), ec);
}

Connection::~Connection() {
  if (held_by_pause_) server_.CountHeldByPause(-1);
  peers_->Remove(this);
  if (registered_) server_.clients().Remove(&client_);
  ClientBuffersOf().Remove(&client_);
  if (server_.pubsub() != nullptr) server_.pubsub()->ForgetClient(client_);
  server_.monitors().Remove(&client_);
  server_.watches().UnwatchAll(&client_);
  server_.tracking().Disable(client_);
}

void Connection::EnableTls(std::shared_ptr<asio::ssl::context> context, TlsAuthClients auth) {
  tls_ = std::make_unique<TlsStream>(socket_, std::move(context), auth);
  client_.tls = true;
}

template <typename Handler>
void Connection::ReadSome(asio::mutable_buffer buffer, Handler&& handler) {
  if (tls_ != nullptr) {
    tls_->stream().async_read_some(buffer, std::forward<Handler>(handler));
  } else {
    socket_.async_read_some(buffer, std::forward<Handler>(handler));
  }
}

template <typename Handler>
void Connection::WriteSome(asio::const_buffer buffer, Handler&& handler) {
  if (tls_ != nullptr) {
    tls_->stream().async_write_some(buffer, std::forward<Handler>(handler));
  } else {
    socket_.async_write_some(buffer, std::forward<Handler>(handler));
  }
}

void Connection::Start() {
  std::weak_ptr<Connection> weak = weak_from_this();
  server_.clients().Add(&client_, [weak] {
    if (auto self = weak.lock()) self->RequestClose();
  });
  registered_ = true;
  peers_->Add(shared_from_this());
  PublishBuffers(0);
  ClientBuffersOf().Add(&client_, &buffers_);
  blocked_.set_notify([weak](uint64_t gen, BlockEvent event) {
    if (auto self = weak.lock()) {
      asio::post(self->socket_.get_executor(),
                 [self, gen, event] { self->OnBlockEvent(gen, event); });
    }
  });
  // A publisher (any thread) wakes the connection on its own thread. The strong reference moves
  // into the posted handler, so the connection is never destroyed on the publisher's thread
  // (which holds the pub/sub registry's lock).
  client_.outbox.set_wake([weak] {
    if (auto self = weak.lock()) {
      auto executor = self->socket_.get_executor();
      asio::post(executor, [self = std::move(self)] { self->OnPush(); });
    }
  });
  server_.stats().total_connections_received.fetch_add(1, std::memory_order_relaxed);
  if (tls_ != nullptr) {
    asio::post(socket_.get_executor(), [self = shared_from_this()] {
      if (self->closed_) return;
      self->tls_->Handshake(self, [self](const std::string& error) { self->OnHandshake(error); });
    });
    return;
  }
  asio::post(socket_.get_executor(), [self = shared_from_this()] { self->Read(); });
}

void Connection::OnHandshake(const std::string& error) {
  if (closed_) return;  // closed meanwhile (CLIENT KILL, shutdown)
  if (!error.empty()) {
    LogError("Error accepting a TLS client connection from " + client_.addr + ": " + error);
    return CloseNow();
  }
  Continue();
}

void Connection::RequestClose() {
  asio::post(socket_.get_executor(), [self = shared_from_this()] {
    if (self->writing_ || self->awaiting_durable_) {
      self->close_when_idle_ = true;
    } else {
      self->CloseNow();
    }
  });
}

void Connection::Read() {
  if (closed_ || reading_) return;
  if (blocked_.parked()) return ReadWhileParked();
  if (in_len_ == in_.size()) {
    // Full: a command larger than the buffer is still arriving. Grow (amortised doubling) up
    // to client-query-buffer-limit; past it, close the client as Redis does.
    const auto limit = static_cast<size_t>(server_.query_buffer_limit());
    if (in_len_ >= limit) {
      return Drop(
          "query buffer of " + std::to_string(in_len_) + " bytes reached client-query-buffer-limit",
          server_.stats().client_query_buffer_limit_disconnections);
    }
    in_.resize(std::min(in_.size() * 2, limit));
  }
  reading_ = true;
  if (tls_ != nullptr) {
    return ReadSome(
        asio::buffer(in_.data() + in_len_, in_.size() - in_len_),
        [self = shared_from_this()](const std::error_code& ec, size_t n) { self->OnRead(ec, n); });
  }
  ReadPlain();
}

// A plain socket is read only on this thread, in a handler, never by the reactor ahead of one:
// what a client sent stays in the socket until the connection runs it, so while a busy script
// holds this thread its commands are still there for busy serving (connection_busy.cc). A
// reactor read (async_read_some) takes them into in_ with its completion queued behind the
// script when they arrived in the same look at the sockets as the script's command. After a
// read that leaves the socket empty a readiness wait is armed at once (ArmReadWait), so the
// edge-triggered reactor's next report of this socket reaches it, and the next read waits for
// that report instead of trying first: one recv per arrival, where asio's own read makes two
// (its first try fails); arming the wait costs an epoll_ctl, and the server's CPU per request
// measured the same (docs/engine.md, "The hot path").
void Connection::ReadPlain() {
  if (read_wait_armed_ && !readable_) {  // empty since the last read: the wait reads on
    want_read_ = true;
    return;
  }
  readable_ = false;
  std::error_code ec;
  const size_t space = in_.size() - in_len_;
  const size_t n = socket_.read_some(asio::buffer(in_.data() + in_len_, space), ec);
  if (ec == asio::error::would_block) {
    want_read_ = true;
    return ArmReadWait();
  }
  if (!ec && n < space) ArmReadWait();
  OnRead(ec, n);
}

void Connection::ArmReadWait() {
  if (read_wait_armed_) return;
  read_wait_armed_ = true;
  socket_.async_wait(asio::socket_base::wait_read,
                     [self = shared_from_this()](const std::error_code& ec) {
                       self->read_wait_armed_ = false;
                       const bool want = self->want_read_;
                       self->want_read_ = false;
                       if (ec || self->closed_) {
                         if (want) self->OnRead(ec ? ec : asio::error::operation_aborted, 0);
                         return;
                       }
                       self->readable_ = true;
                       if (want) self->ReadPlain();
                     });
}

void Connection::OnRead(const std::error_code& ec, size_t n) {
  reading_ = false;
  if (ec || closed_) return CloseNow();
  in_len_ += n;
  server_.stats().total_net_input_bytes.fetch_add(static_cast<int64_t>(n),
                                                  std::memory_order_relaxed);
  if (writing_) {  // pushed messages are being written (OnPush): run these once they are
    more_input_ = true;
    return;
  }
  ProcessBatch();
  FinishBatch();
}

void Connection::ReadWhileParked() {
  reading_ = true;
  parked_in_.resize(kParkedReadBuffer);
  ReadSome(asio::buffer(parked_in_),
           [self = shared_from_this()](const std::error_code& ec, size_t n) {
             self->OnReadWhileParked(ec, n);
           });
}

void Connection::OnReadWhileParked(const std::error_code& ec, size_t n) {
  reading_ = false;
  if (ec || closed_) return CloseNow();  // a client that leaves while blocked is forgotten
  server_.stats().total_net_input_bytes.fetch_add(static_cast<int64_t>(n),
                                                  std::memory_order_relaxed);
  const auto limit = static_cast<size_t>(server_.query_buffer_limit());
  if (in_len_ + n > limit) {
    return Drop("query buffer of " + std::to_string(in_len_ + n) +
                    " bytes reached client-query-buffer-limit",
                server_.stats().client_query_buffer_limit_disconnections);
  }
  if (in_.size() < in_len_ + n) in_.resize(std::max(in_len_ + n, in_.size() * 2));
  std::memcpy(in_.data() + in_len_, parked_in_.data(), n);
  in_len_ += n;
  if (!blocked_.parked()) std::vector<char>().swap(parked_in_);  // resumed meanwhile
  more_input_ = true;
  if (!writing_ && !awaiting_durable_) Continue();
}

void Connection::FinishBatch() {
  // A replica's link on this primary (REPLCONF ACKs: no reply, no write) joins no round. A round
  // whose replies replica-ack-writes holds waits for exactly these ACKs: a link waiting in it
  // would neither read the next ACK nor send the stream (OnPush), and the round would wait for
  // replica-ack-timeout. With no reply to hold, skipping the round acknowledges nothing early
  // (what out_ holds then is the stream, taken from the outbox).
  if (batch_replies_ == 0 &&
      client_.repl_kind.load(std::memory_order_relaxed) == ClientState::kReplicaLink) {
    batch_wrote_ = false;
    return AfterDurable(Status::Ok());
  }
  // Other connections of this thread are served meanwhile; this one reads nothing more until
  // the round is durable.
  awaiting_durable_ = true;
  round_.Join(shared_from_this());
}

void Connection::RoundDone(const Status& status, bool write_failed, bool continue_later) {
  // Conservative: any write since the batch began (the round's group write included) counts,
  // and a failed group write means no command of the batch may be acknowledged.
  batch_wrote_ = write_failed || store_.DurabilityTicket() != batch_seq_;
  AfterDurable(status, continue_later);
}

void Connection::AfterDurable(Status flushed, bool continue_later) {
  awaiting_durable_ = false;
  if (closed_) return;
  if (!flushed.ok() && batch_wrote_) {
    // The batch's writes may not survive a crash: acknowledge none of them. Every command of
    // the batch gets the error (MISCONF) instead of its reply. (A batch that wrote nothing is
    // answered as usual: reads keep working while the store refuses writes.)
    out_.clear();
    protocol::ReplyWriter out(&out_, client_.resp);
    for (size_t i = 0; i < batch_replies_; ++i) ReplyError(out, flushed);
  }
  // QUIT (and other last replies): the client leaves every registry before it can read its
  // reply, as Redis frees it before serving anyone else, so that a command sent after the reply
  // arrived finds it gone (no subscriber to count, a broken tracking redirect).
  if (client_.close_after_reply) LeaveRegistries();
  if (!out_.empty()) return Write();  // its completion is posted: never continues inline
  if (continue_later) {
    // Whoever started a write or a batch meanwhile continues instead.
    asio::post(socket_.get_executor(), [self = shared_from_this()] {
      if (!self->closed_ && !self->writing_ && !self->awaiting_durable_) self->Continue();
    });
    return;
  }
  Continue();
}

void Connection::Continue() {
  if (close_when_idle_ || client_.close_after_reply ||
      client_.kill_requested.load(std::memory_order_acquire)) {
    return CloseNow();
  }
  if (blocked_.parked() && blocked_.has_event()) return ResumeBlocked();
  // Parked: keeps watching for a disconnect (and writing pushes) only.
  if (!blocked_.parked() && paused_until_ms_ != 0) return WaitForPause();
  if (!blocked_.parked() && more_input_) {
    more_input_ = false;
    ProcessBatch();
    if (closed_) return;
    return FinishBatch();
  }
  if (client_.outbox.queued_bytes() > 0) return WritePushes();
  Read();
}

void Connection::OnPush() {
  if (closed_) return;
  if (writing_ || awaiting_durable_) {
    // Taken when the connection continues; meanwhile only the limits are checked.
    OverOutputLimit();
    return;
  }
  WritePushes();
}

void Connection::WritePushes() {
  client_.outbox.TakeInto(&out_);
  if (OverOutputLimit()) return;
  if (!out_.empty()) return Write();
  Read();
}

void Connection::OnBlockEvent(uint64_t gen, BlockEvent event) {
  if (closed_ || !blocked_.Note(gen, event)) return;
  if (!writing_ && !awaiting_durable_) ResumeBlocked();
}

void Connection::ResumeBlocked() {
  batch_seq_ = store_.DurabilityTicket();
  batch_replies_ = 0;  // the woken command runs in a unit of its own
  protocol::ReplyWriter out(&out_, client_.resp);
  CommandContext ctx{store_, server_, client_, out};
  if (!blocked_.Resume(ctx, dispatcher_)) return Read();  // parked again
  batch_replies_ = 1;
  more_input_ = in_len_ > 0;
  if (OverOutputLimit()) return;
  FinishBatch();
}

bool Connection::UpdateParserLimits() {
  bool unauth = !client_.authenticated && server_.requirepass_set();
  int64_t max_bulk = server_.proto_max_bulk_len();
  if (unauth == limits_unauthenticated_ && max_bulk == limits_max_bulk_) return false;
  parser_.set_limits(CurrentParserLimits());
  limits_unauthenticated_ = unauth;
  limits_max_bulk_ = max_bulk;
  return true;
}

protocol::ParserLimits Connection::CurrentParserLimits() const {
  protocol::ParserLimits limits;
  limits.max_bulk_len = server_.proto_max_bulk_len();
  const bool unauth = !client_.authenticated && server_.requirepass_set();
  return unauth ? protocol::UnauthenticatedLimits(limits) : limits;
}

void Connection::ProcessBatch() {
  batch_seq_ = store_.DurabilityTicket();
  batch_replies_ = 0;
  // The batch's units defer their durability (UnitOptions) and its plain data commands join the
  // round's group (one RocksDB write for every batch of the round): FinishBatch hands the batch
  // to the round, which makes it durable with one write(2) (appendfsync always: a share of one
  // group fsync) before any reply.
  group_ = &round_.group();
  const bool stopped = RunBatchCommands();
  group_ = nullptr;
  if (!stopped) CompactReadBuffer();
  PublishBuffers(0);
}

// Runs the complete commands in the read buffer until it is empty, the replies are large, or
// the group's write failed. Returns true when the connection is being closed (output limit).
bool Connection::RunBatchCommands() {
  size_t offset = 0;
  bool stopped = false;
  prefetched_until_ = 0;  // the first command runs PrefetchAhead, which resets ahead_
  while (offset < in_len_) {
    if (client_.close_after_reply || client_.kill_requested.load(std::memory_order_acquire)) {
      break;
    }
    if (out_.size() >= kBatchReplyBytes || !group_->status().ok()) {
      more_input_ = true;
      break;
    }
    // New limits (AUTH, CONFIG SET proto-max-bulk-len) apply from this command on: what was
    // parsed ahead under the old ones is parsed again.
    if (UpdateParserLimits()) prefetched_until_ = offset;
    if (offset >= prefetched_until_) PrefetchAhead(offset);
    Args args;
    size_t consumed = 0;
    if (!TakeParsedAhead(offset, &args, &consumed)) {
      std::string_view pending(in_.data() + offset, in_len_ - offset);
      protocol::ParseResult r = parser_.Parse(pending, &consumed);
      if (r == protocol::ParseResult::kNeedMore) break;
      if (r == protocol::ParseResult::kError) {
        protocol::ReplyWriter out(&out_, client_.resp);
        ReplyError(out, ProtocolError(parser_.error()));
        ++batch_replies_;
        client_.close_after_reply = true;
        offset = in_len_;
        break;
      }
      args = parser_.args();
    }
    if (!args.empty() && HeldByPause(args)) {
      more_input_ = true;  // parsed again once the pause ends
      break;
    }
    if (!args.empty()) {
      // Messages published before this command ran are written before its reply.
      if (client_.outbox.queued_bytes() > 0) client_.outbox.TakeInto(&out_);
      protocol::ReplyWriter out(&out_, client_.resp);
      const size_t reply_start = out_.size();
      size_t argv_mem = 0;
      for (std::string_view a : args) argv_mem += a.size();
      PublishBuffers(argv_mem);
      RunCommand(out, args);
      if (blocked_.TakePark(args, dispatcher_, out_.size() > reply_start)) {
        DropSuppressedReply(out_, reply_start, args);  // moves REPLY SKIP on; the wake answers
        offset += consumed;  // parked: no reply now, nothing more runs until it resumes
        break;
      }
      if (!DropSuppressedReply(out_, reply_start, args) && out_.size() > reply_start) {
        ++batch_replies_;
      }
    }
    offset += consumed;
    if (OverOutputLimit()) {
      stopped = true;
      break;
    }
  }
  if (offset > 0 && !stopped) {
    // Keep the unparsed tail at the start of the buffer (the parser resumes on the same bytes).
    std::memmove(in_.data(), in_.data() + offset, in_len_ - offset);
    in_len_ -= offset;
  }
  return stopped;
}

void Connection::RunCommand(protocol::ReplyWriter& out, Args args) {
  CommandContext ctx{store_, server_, client_, out};
  ctx.group = group_;
  ctx.blocking = &blocked_;
  try {
    dispatcher_.Dispatch(ctx, args);
  } catch (const std::exception& e) {
    // A bug or resource exhaustion in one command must not take the I/O thread down with it.
    LogError(std::string("command '") + std::string(args[0]) + "' failed: " + e.what());
    ReplyError(out, InternalError(e.what()));
  }
  client_.outbox.set_resp(client_.resp);  // HELLO: later messages use the new protocol
}

namespace {

// Redis checks -READONLY, -MASTERDOWN and -NOREPLICAS before a pause: a write on a primary that
// FAILOVER has just made a replica is refused at once, not held until the failover ends.
bool RefusedByReplication(Store& store, ServerState& server, ClientState& client,
                          const CommandSpec& spec) {
  ReplicationHook* repl = GetReplicationHook();
  if (repl == nullptr || !repl->engaged()) return false;
  std::string scratch;
  protocol::ReplyWriter out(&scratch, client.resp);
  const CommandContext ctx{store, server, client, out};
  return !repl->Admit(ctx, spec).ok();
}

// The flags a pause judges a call by, as Redis's processCommand: a script's as its shebang or
// function flags say (no-writes: read-only), EXEC's those of the commands it would run.
uint32_t PauseFlags(Store& store, ServerState& server, ClientState& client, const CommandSpec& spec,
                    Args args) {
  if (spec.name == "exec") {
    for (const QueuedCommand& q : client.multi.queue) {
      std::vector<std::string_view> views(q.args.begin(), q.args.end());
      if (server.PausedUntil(PauseFlags(store, server, client, *q.spec, views)) != 0) {
        return spec.flags | kWrite;
      }
    }
    return spec.flags;
  }
  if (!(spec.flags & kScriptUnit)) return spec.flags;
  std::string scratch;
  protocol::ReplyWriter out(&scratch, client.resp);
  CommandContext ctx{store, server, client, out};
  const std::optional<bool> writes = ScriptCallWrites(ctx, spec, args);
  return writes.has_value() && !*writes ? spec.flags | kReadOnly : spec.flags;
}

}  // namespace

bool Connection::HeldByPause(Args args) {
  if (!server_.MaybePaused()) {  // the usual case: no command lookup
    paused_until_ms_ = 0;
    if (held_by_pause_) [[unlikely]]
      SetHeldByPause(false);
    return false;
  }
  const CommandSpec* spec = dispatcher_.Resolve(args);
  paused_until_ms_ =
      server_.PausedUntil(spec == nullptr ? 0 : PauseFlags(store_, server_, client_, *spec, args));
  if (paused_until_ms_ != 0 && spec != nullptr &&
      RefusedByReplication(store_, server_, client_, *spec)) {
    paused_until_ms_ = 0;  // answered -READONLY (or the like) now, as Redis
  }
  SetHeldByPause(paused_until_ms_ != 0);
  return paused_until_ms_ != 0;
}

void Connection::SetHeldByPause(bool held) {
  if (held == held_by_pause_) return;
  held_by_pause_ = held;
  server_.CountHeldByPause(held ? 1 : -1);
  // As Redis's postponed clients: flag `b` in CLIENT LIST, never closed for being idle.
  client_.blocked.store(held, std::memory_order_relaxed);
}

void Connection::WaitForPause() {
  constexpr int64_t kPausePollMs = 10;
  const int64_t wait =
      std::clamp<int64_t>(paused_until_ms_ - ServerState::RealNowMs(), 0, kPausePollMs);
  pause_timer_.expires_after(std::chrono::milliseconds(wait));
  pause_timer_.async_wait([self = shared_from_this()](const std::error_code& ec) {
    if (ec || self->closed_) return;
    self->paused_until_ms_ = 0;
    if (!self->writing_ && !self->awaiting_durable_) self->Continue();
  });
}

namespace {

bool IsSubscriptionCommand(std::string_view name) {
  for (const char* c :
       {"subscribe", "psubscribe", "ssubscribe", "unsubscribe", "punsubscribe", "sunsubscribe"}) {
    if (EqualsIgnoreCase(name, c)) return true;
  }
  return false;
}

}  // namespace

bool Connection::DropSuppressedReply(std::string& replies, size_t reply_start, Args args) {
  const bool drop = (client_.reply_off || client_.reply_skip) &&
                    !(replies.size() > reply_start && replies[reply_start] != '-' &&
                      !args.empty() && IsSubscriptionCommand(args[0]));
  client_.reply_skip = client_.reply_skip_next;  // SKIP silences the one command after it
  client_.reply_skip_next = false;
  if (drop) replies.resize(reply_start);
  return drop;
}

void Connection::PublishBuffers(size_t argv_mem) {
  // Redis's mstate.argv_len_sums: each queued command's argument bytes plus a pointer per
  // argument; summed as commands are queued (the queue only grows until EXEC/DISCARD).
  const MultiState& multi = client_.multi;
  if (!multi.active || multi.queue.size() < multi_counted_) multi_counted_ = multi_mem_ = 0;
  for (; multi.active && multi_counted_ < multi.queue.size(); ++multi_counted_) {
    const std::vector<std::string>& args = multi.queue[multi_counted_].args;
    multi_mem_ += args.size() * sizeof(void*);
    for (const std::string& a : args) multi_mem_ += a.size();
  }
  // Redis keeps the first 16 KB of pending replies in the client's own buffer (obl, bytes) and
  // the rest in a list of 16 KB blocks (oll blocks, omem bytes).
  constexpr size_t kReplyChunk = 16 * 1024;
  const size_t pending = out_.size() - out_sent_ + client_.outbox.queued_bytes();
  const size_t obl = std::min(pending, kReplyChunk);
  const size_t omem = pending - obl;
  reply_peak_ = std::max(reply_peak_, out_.size());
  auto set = [](std::atomic<int64_t>& field, size_t v) {
    field.store(static_cast<int64_t>(v), std::memory_order_relaxed);
  };
  buffers_.multi.store(multi.active ? static_cast<int64_t>(multi.queue.size()) : -1,
                       std::memory_order_relaxed);
  set(buffers_.qbuf, in_len_);
  set(buffers_.qbuf_free, in_.size() - in_len_);
  set(buffers_.argv_mem, argv_mem);
  set(buffers_.multi_mem, multi_mem_);
  set(buffers_.rbs, out_.capacity());
  set(buffers_.rbp, reply_peak_);
  set(buffers_.obl, obl);
  set(buffers_.oll, (omem + kReplyChunk - 1) / kReplyChunk);
  set(buffers_.omem, omem);
  set(buffers_.tot_mem, sizeof(Connection) + in_.capacity() + parked_in_.capacity() +
                            out_.capacity() + client_.outbox.queued_bytes() + argv_mem +
                            multi_mem_);
}

void Connection::CompactReadBuffer() {
  if (in_len_ == 0 && in_.size() > kKeepReadBuffer) {
    std::vector<char>(kInitialReadBuffer).swap(in_);
  }
}

void Connection::Write() {
  writing_ = true;
  if (tls_ == nullptr) return WritePlain();
  WriteSome(
      asio::buffer(out_.data() + out_sent_, out_.size() - out_sent_),
      [self = shared_from_this()](const std::error_code& ec, size_t n) { self->OnWrite(ec, n); });
}

// As asio's own write: a send now, the completion posted (never run inline: a stream of pushes
// would recurse), a wait for writability when the socket is full. Done by hand so that a write
// whose bytes all left is known as such (written_) while its completion waits behind a busy
// script: busy serving may answer the connection then.
void Connection::WritePlain() {
  std::error_code ec;
  const size_t n =
      socket_.write_some(asio::buffer(out_.data() + out_sent_, out_.size() - out_sent_), ec);
  if (ec == asio::error::would_block) {
    socket_.async_wait(asio::socket_base::wait_write,
                       [self = shared_from_this()](const std::error_code& wait_ec) {
                         if (wait_ec || self->closed_) return self->OnWrite(wait_ec, 0);
                         self->WritePlain();
                       });
    return;
  }
  written_ = !ec && out_sent_ + n == out_.size();
  asio::post(socket_.get_executor(), [self = shared_from_this(), ec, n] { self->OnWrite(ec, n); });
}

void Connection::OnWrite(const std::error_code& ec, size_t n) {
  writing_ = false;
  written_ = false;
  server_.stats().total_net_output_bytes.fetch_add(static_cast<int64_t>(n),
                                                   std::memory_order_relaxed);
  if (closed_) return;
  if (ec) return CloseNow();
  out_sent_ += n;
  if (out_sent_ < out_.size()) {
    if (OverOutputLimit()) return;
    PublishBuffers(0);
    return Write();
  }
  out_sent_ = 0;
  if (out_.capacity() > kKeepWriteBuffer) {
    std::string().swap(out_);
  } else {
    out_.clear();
  }
  PublishBuffers(0);
  OverOutputLimit();  // nothing pending: disarms the soft-limit timer
  Continue();
}

bool Connection::OverOutputLimit() {
  if (closed_) return true;
  // A subscribed client is of the pubsub class (Redis's CLIENT_PUBSUB); its pending bytes
  // include the messages queued for it and not yet taken.
  const bool pubsub = client_.subscribed();
  const OutputBufferLimit limit =
      pubsub ? server_.pubsub_output_buffer_limit() : server_.output_buffer_limit();
  client_.outbox.set_unsent(out_.size() - out_sent_);
  const auto pending =
      static_cast<int64_t>(out_.size() - out_sent_ + client_.outbox.queued_bytes());
  auto describe = [&](const char* which) {
    return "pending replies of " + std::to_string(pending) + " bytes over the " + which +
           " client-output-buffer-limit (" + (pubsub ? "pubsub " : "normal ") +
           std::to_string(limit.hard) + " " + std::to_string(limit.soft) + " " +
           std::to_string(limit.soft_seconds) + ")";
  };
  if ((limit.hard > 0 && pending > limit.hard) || client_.outbox.overflowed()) {
    Drop(describe("hard"), server_.stats().client_output_buffer_limit_disconnections);
    return true;
  }
  const bool over_soft = limit.soft > 0 && pending > limit.soft;
  if (!over_soft) {
    if (soft_limit_since_ != std::chrono::steady_clock::time_point{}) soft_limit_timer_.cancel();
    soft_limit_since_ = {};
    return false;
  }
  const auto now = std::chrono::steady_clock::now();  // read only when over the soft limit
  if (soft_limit_since_ == std::chrono::steady_clock::time_point{}) {
    soft_limit_since_ = now;
    soft_limit_timer_.expires_at(now + std::chrono::seconds(limit.soft_seconds) +
                                 std::chrono::milliseconds(1));
    soft_limit_timer_.async_wait(
        [self = shared_from_this()](const std::error_code& e) { self->OnSoftLimitTimer(e); });
    return false;
  }
  if (now - soft_limit_since_ > std::chrono::seconds(limit.soft_seconds)) {
    Drop(describe("soft") + " for more than " + std::to_string(limit.soft_seconds) + " s",
         server_.stats().client_output_buffer_limit_disconnections);
    return true;
  }
  return false;
}

void Connection::OnSoftLimitTimer(const std::error_code& ec) {
  if (ec || closed_ || soft_limit_since_ == std::chrono::steady_clock::time_point{}) return;
  // Normally due: over the soft limit for longer than its seconds. A stale wake-up (the limit
  // was left and reached again since) checks again shortly.
  if (!OverOutputLimit() && soft_limit_since_ != std::chrono::steady_clock::time_point{}) {
    soft_limit_timer_.expires_after(std::chrono::milliseconds(100));
    soft_limit_timer_.async_wait(
        [self = shared_from_this()](const std::error_code& e) { self->OnSoftLimitTimer(e); });
  }
}

void Connection::Drop(const std::string& why, StatCounter& counter) {
  counter.fetch_add(1, std::memory_order_relaxed);
  LogInfo("closing client id=" + std::to_string(client_.id) + " addr=" + client_.addr + ": " + why);
  if (!writing_) out_.clear();  // else the aborted write still refers to it until its handler
  CloseNow();
}

void Connection::CloseNow() {
  if (closed_) return;
  closed_ = true;
  soft_limit_timer_.cancel();
  pause_timer_.cancel();
  LeaveRegistries();
  client_.outbox.Close();
  // TLS: close_notify first (bounded, asynchronous), unless a write in flight is being aborted.
  if (tls_ != nullptr && !writing_ && tls_->Established()) {
    auto self = shared_from_this();
    tls_->Shutdown(self, [self] { self->CloseSocket(); });
    return;
  }
  CloseSocket();
}

void Connection::LeaveRegistries() {
  SetHeldByPause(false);
  if (registered_) {
    server_.clients().Remove(&client_);
    registered_ = false;
  }
  blocked_.Forget();
  if (server_.pubsub() != nullptr) server_.pubsub()->ForgetClient(client_);
  server_.monitors().Remove(&client_);
  server_.tracking().Disable(client_);
}

void Connection::CloseSocket() {
  std::error_code ec;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  socket_.close(ec);
}

}  // namespace sluice::server
