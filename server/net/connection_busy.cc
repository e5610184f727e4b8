// Connection::ServeWhileThreadBusy: a connection answered from the control thread while its own
// I/O thread runs a busy script (server/net/busy_serving.h).
#include <sys/socket.h>

#include <string>
#include <vector>

#include "server/core/client_state.h"
#include "server/core/command.h"
#include "server/core/server_state.h"
#include "server/net/connection.h"

namespace sluice::server {

namespace {

// Input looked at per pass: a command longer than this waits for the connection's thread.
constexpr size_t kPeekBytes = 64 * 1024;
// Commands run per connection and pass, so one client cannot hold the pass (and the script's
// end, which waits for it).
constexpr size_t kMaxCommands = 256;

}  // namespace

void Connection::ServeWhileThreadBusy() {
  // Only a connection waiting for input with nothing in flight on its thread: not the one
  // running the script (in its batch), no reply being written (one whose bytes have all left
  // counts as written: only its completion waits) or made durable, no command parked or paused,
  // no partial command buffered, no message queued ahead of replies. Its input is all still in
  // the socket (ReadPlain reads only in the connection's own handler); a connection accepted
  // while the script runs qualifies too (its first read is posted behind the script). Anything
  // else waits for the thread.
  if (closed_ || group_ != nullptr || (writing_ && !written_) || awaiting_durable_ ||
      tls_ != nullptr || in_len_ != 0 || blocked_.parked() || paused_until_ms_ != 0 ||
      close_when_idle_ || client_.close_after_reply ||
      client_.kill_requested.load(std::memory_order_acquire) ||
      client_.outbox.queued_bytes() != 0 ||
      client_.repl_kind.load(std::memory_order_relaxed) != ClientState::kNotRepl) {
    return;
  }
  const int fd = socket_.native_handle();
  thread_local std::vector<char> input(kPeekBytes);  // the control thread's
  // Peeked, not read: what is not run here (a partial command, one after a WATCH) stays in the
  // socket for the thread's own read (ReadPlain: a readiness it was told of finds nothing and
  // waits again).
  const ssize_t n = ::recv(fd, input.data(), input.size(), MSG_PEEK | MSG_DONTWAIT);
  if (n <= 0) return;  // nothing yet, or the peer left: the thread sees that once free
  protocol::RequestParser parser;
  parser.set_limits(CurrentParserLimits());
  std::string replies;
  size_t used = 0;
  for (size_t commands = 0; commands < kMaxCommands && used < static_cast<size_t>(n); ++commands) {
    size_t consumed = 0;
    const std::string_view pending(input.data() + used, static_cast<size_t>(n) - used);
    // A protocol error is left to the thread, which answers it and closes.
    if (parser.Parse(pending, &consumed) != protocol::ParseResult::kCommand) break;
    const Args args = parser.args();
    if (!args.empty()) {
      // An allow_busy command that names keys (WATCH) reads them under their locks, which the
      // busy script may hold: it runs once the thread is free (Redis would answer it now). Any
      // other command with keys is refused with -BUSY before it locks anything.
      const CommandSpec* spec = dispatcher_.Resolve(args);
      if (spec != nullptr && (spec->flags & kAllowBusy) &&
          (spec->first_key != 0 || spec->find_keys != nullptr)) {
        break;
      }
      protocol::ReplyWriter out(&replies, client_.resp);
      const size_t reply_start = replies.size();
      RunCommand(out, args);  // group_ is null: nothing joins the busy thread's round
      DropSuppressedReply(replies, reply_start, args);
    }
    used += consumed;
    if (client_.close_after_reply) break;
  }
  if (used == 0) return;
  // Consumes exactly the commands that ran: nothing else reads this socket meanwhile.
  if (::recv(fd, input.data(), used, MSG_DONTWAIT) != static_cast<ssize_t>(used)) {
    client_.close_after_reply = true;  // cannot happen; if it does, the thread closes
  }
  server_.stats().total_net_input_bytes.fetch_add(static_cast<int64_t>(used),
                                                  std::memory_order_relaxed);
  size_t sent = 0;
  while (sent < replies.size()) {
    const ssize_t w =
        ::send(fd, replies.data() + sent, replies.size() - sent, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (w <= 0) break;
    sent += static_cast<size_t>(w);
  }
  server_.stats().total_net_output_bytes.fetch_add(static_cast<int64_t>(sent),
                                                   std::memory_order_relaxed);
  if (sent < replies.size()) {
    // The client is not reading: the rest waits in the outbox, which wakes the thread (after the
    // script) to write it before anything else; no more is served from this connection then.
    const bool pubsub = client_.subscribed();
    client_.outbox.PushEncoded(
        std::string_view(replies).substr(sent),
        pubsub ? server_.pubsub_output_buffer_limit() : server_.output_buffer_limit());
  } else if (client_.close_after_reply) {
    ::shutdown(fd, SHUT_RDWR);  // QUIT: the thread's pending read ends and it closes
  }
}

}  // namespace sluice::server
