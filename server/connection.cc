#include "server/connection.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <utility>

#include "server/errors.h"
#include "server/logging.h"
#include "server/server_state.h"
#include "sluice/store.h"

namespace sluice::server {

namespace {

constexpr size_t kInitialReadBuffer = 16 * 1024;  // Redis's PROTO_IOBUF_LEN
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
                       const Dispatcher& dispatcher)
    : socket_(std::move(socket)),
      store_(store),
      server_(server),
      dispatcher_(dispatcher),
      in_(kInitialReadBuffer) {
  std::error_code ec;
  client_.id = server_.clients().NextId();
  auto remote = socket_.remote_endpoint(ec);
  if (!ec) client_.addr = EndpointText(remote);
  auto local = socket_.local_endpoint(ec);
  if (!ec) client_.laddr = EndpointText(local);
  client_.fd = socket_.native_handle();
  client_.created_ms = ServerState::RealNowMs();
  client_.last_interaction_ms.store(client_.created_ms, std::memory_order_relaxed);
  client_.authenticated = !server_.requirepass_set();
  socket_.set_option(asio::ip::tcp::no_delay(true), ec);
}

Connection::~Connection() {
  if (registered_) server_.clients().Remove(&client_);
  server_.watches().UnwatchAll(&client_);
}

void Connection::Start() {
  std::weak_ptr<Connection> weak = weak_from_this();
  server_.clients().Add(&client_, [weak] {
    if (auto self = weak.lock()) self->RequestClose();
  });
  registered_ = true;
  server_.stats().total_connections_received.fetch_add(1, std::memory_order_relaxed);
  asio::post(socket_.get_executor(), [self = shared_from_this()] { self->Read(); });
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
  if (closed_) return;
  if (in_len_ == in_.size()) {
    // Full: a command larger than the buffer is still arriving. Grow (amortised doubling) up
    // to the query buffer limit; past it, close the client as Redis does.
    if (in_.size() >= kQueryBufferLimit) {
      LogInfo("closing client id=" + std::to_string(client_.id) + " addr=" + client_.addr +
              ": query buffer over 1gb");
      return CloseNow();
    }
    in_.resize(std::min(in_.size() * 2, kQueryBufferLimit));
  }
  socket_.async_read_some(
      asio::buffer(in_.data() + in_len_, in_.size() - in_len_),
      [self = shared_from_this()](const std::error_code& ec, size_t n) { self->OnRead(ec, n); });
}

void Connection::OnRead(const std::error_code& ec, size_t n) {
  if (ec || closed_) return CloseNow();
  in_len_ += n;
  server_.stats().total_net_input_bytes.fetch_add(static_cast<int64_t>(n),
                                                  std::memory_order_relaxed);
  ProcessBatch();
  FinishBatch();
}

void Connection::FinishBatch() {
  if (store_.durability() != Durability::kAlways) return AfterDurable(store_.FlushLog());
  // The ticket is taken after the batch: it covers the batch's own writes and every write its
  // reads could have seen, so no reply reveals anything a power loss could still erase.
  const uint64_t ticket = store_.DurabilityTicket();
  awaiting_durable_ = true;
  store_.WhenDurable(ticket, [self = shared_from_this()](Status s) {
    // On the store's syncer thread (or inline): continue on the connection's own thread. Other
    // connections of this thread are served meanwhile; this one reads nothing more until then.
    asio::post(self->socket_.get_executor(),
               [self, s = std::move(s)]() mutable { self->AfterDurable(std::move(s)); });
  });
}

void Connection::AfterDurable(Status flushed) {
  awaiting_durable_ = false;
  if (closed_) return;
  if (!flushed.ok()) {
    // The batch's writes may not survive a crash: acknowledge none of them. Drop every reply
    // of the batch and close the connection.
    LogError("closing client id=" + std::to_string(client_.id) +
             ": write-ahead log flush failed: " + flushed.ToString());
    out_.clear();
    client_.close_after_reply = true;
  }
  if (!out_.empty()) return Write();
  if (close_when_idle_ || client_.close_after_reply ||
      client_.kill_requested.load(std::memory_order_acquire)) {
    return CloseNow();
  }
  Read();
}

void Connection::UpdateParserLimits() {
  bool unauth = !client_.authenticated && server_.requirepass_set();
  int64_t max_bulk = server_.proto_max_bulk_len();
  if (unauth == limits_unauthenticated_ && max_bulk == limits_max_bulk_) return;
  protocol::ParserLimits limits;
  limits.max_bulk_len = max_bulk;
  parser_.set_limits(unauth ? protocol::UnauthenticatedLimits(limits) : limits);
  limits_unauthenticated_ = unauth;
  limits_max_bulk_ = max_bulk;
}

void Connection::ProcessBatch() {
  size_t offset = 0;
  {
    // The batch's units defer their durability (UnitOptions): FinishBatch makes them durable
    // with one write(2) (appendfsync always: a share of one group fsync) before any reply.
    while (offset < in_len_) {
      if (client_.close_after_reply || client_.kill_requested.load(std::memory_order_acquire)) {
        break;
      }
      UpdateParserLimits();
      size_t consumed = 0;
      std::string_view pending(in_.data() + offset, in_len_ - offset);
      protocol::ParseResult r = parser_.Parse(pending, &consumed);
      if (r == protocol::ParseResult::kNeedMore) break;
      protocol::ReplyWriter out(&out_, client_.resp);
      if (r == protocol::ParseResult::kError) {
        ReplyError(out, ProtocolError(parser_.error()));
        client_.close_after_reply = true;
        offset = in_len_;
        break;
      }
      if (!parser_.args().empty()) RunCommand(out);
      offset += consumed;
    }
  }
  if (offset > 0) {
    // Keep the unparsed tail at the start of the buffer (the parser resumes on the same bytes).
    std::memmove(in_.data(), in_.data() + offset, in_len_ - offset);
    in_len_ -= offset;
  }
  CompactReadBuffer();
}

void Connection::RunCommand(protocol::ReplyWriter& out) {
  CommandContext ctx{store_, server_, client_, out};
  try {
    dispatcher_.Dispatch(ctx, parser_.args());
  } catch (const std::exception& e) {
    // A bug or resource exhaustion in one command must not take the I/O thread down with it.
    LogError(std::string("command '") + std::string(parser_.args()[0]) + "' failed: " + e.what());
    ReplyError(out, InternalError(e.what()));
  }
}

void Connection::CompactReadBuffer() {
  if (in_len_ == 0 && in_.size() > kKeepReadBuffer) {
    std::vector<char>(kInitialReadBuffer).swap(in_);
  }
}

void Connection::Write() {
  writing_ = true;
  asio::async_write(
      socket_, asio::buffer(out_),
      [self = shared_from_this()](const std::error_code& ec, size_t n) { self->OnWrite(ec, n); });
}

void Connection::OnWrite(const std::error_code& ec, size_t n) {
  writing_ = false;
  server_.stats().total_net_output_bytes.fetch_add(static_cast<int64_t>(n),
                                                   std::memory_order_relaxed);
  if (out_.capacity() > kKeepWriteBuffer) {
    std::string().swap(out_);
  } else {
    out_.clear();
  }
  if (ec || close_when_idle_ || client_.close_after_reply ||
      client_.kill_requested.load(std::memory_order_acquire)) {
    return CloseNow();
  }
  Read();
}

void Connection::CloseNow() {
  if (closed_) return;
  closed_ = true;
  if (registered_) {
    server_.clients().Remove(&client_);
    registered_ = false;
  }
  std::error_code ec;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  socket_.close(ec);
}

}  // namespace sluice::server
