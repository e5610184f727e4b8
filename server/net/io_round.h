// IoRound: the work one I/O thread does between two looks at its sockets, made durable once.
//
// Redis runs every ready client's commands, then writes its AOF once (and fsyncs once under
// appendfsync always), then sends every reply: one event-loop iteration. A round is the same on
// an asio thread: the connections whose input (or wake-up) is handled before the thread next
// polls its sockets run their plain data commands as members of one CommitGroup, so all of them
// are one RocksDB write; when the ready handlers are done the round ends: the group is written,
// the write-ahead log is handed to the OS with one write(2) (under always: one request for the
// group fsync), and only then does every connection of the round send its replies. With one busy
// connection a round is exactly its read batch, as before.
//
// Why this is safe: a member's locks stay with the group until the group is written (other
// threads wait for them, never the other way round: CommitGroup's rule), no reply of the round
// leaves before the write and its durability, and a failed write answers every command of the
// round's batches with the error. The round ends by a handler posted behind the handlers already
// ready, so it never waits for new input.
//
// Threading: one IoRound per io_context, used only on that context's thread.
#pragma once

#include <asio.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "sluice/status.h"
#include "sluice/transaction.h"

namespace sluice::server {

class Connection;

class IoRound {
 public:
  IoRound(asio::io_context& io, Store& store);
  ~IoRound();  // writes a group still open (shutdown); its replies are not sent
  IoRound(const IoRound&) = delete;
  IoRound& operator=(const IoRound&) = delete;

  // The commit group of the current round, opening a round when none is.
  CommitGroup& group();
  // `conn` has finished its batch: once the round's writes are durable (or failed),
  // conn->RoundDone(status) runs on this thread.
  void Join(std::shared_ptr<Connection> conn);
  // Called on this thread by a script that has just become busy (its Lua hook; busy serving,
  // server/net/busy_serving.h): the connections that joined the round before the script began
  // would wait for its end for their replies, which Redis sends meanwhile. When their writes
  // are already written (the group holds no member: a script that would have shared the group
  // with them was stopped and runs again alone, after the group's write: lua_vm.cc) and no
  // replica must acknowledge them, makes them durable here (the log's write,
  // or the fsync under appendfsync always) and sends their replies; they read on after the
  // script. Otherwise leaves them to the round's end. Rounds that already ended and wait for
  // their fsync (appendfsync always) are answered too, once it is done.
  void DeliverWhileBusy();

 private:
  void Open();
  void End();
  // Hands every joined connection the round's outcome: `status` of making it durable;
  // `write_failed`: the group's write itself failed, so no command of the round took effect.
  // `continue_later`: see Connection::RoundDone.
  static void Finish(std::vector<std::shared_ptr<Connection>>& joined, const Status& status,
                     bool write_failed, bool continue_later = false);
  // The round `id` (waiting_) is durable: answers its connections, unless DeliverWhileBusy did.
  void FinishWaiting(uint64_t id, const Status& status);

  // A round ended under appendfsync always, its connections waiting for the group fsync.
  struct Waiting {
    uint64_t id;
    uint64_t ticket;  // Store::DurabilityTicket after the round's write
    std::vector<std::shared_ptr<Connection>> joined;
  };

  asio::io_context& io_;
  Store& store_;
  std::optional<CommitGroup> group_;
  std::vector<std::shared_ptr<Connection>> joined_;
  std::vector<Waiting> waiting_;  // in the order they ended
  uint64_t last_waiting_id_ = 0;
  bool open_ = false;  // End is posted
};

}  // namespace sluice::server
