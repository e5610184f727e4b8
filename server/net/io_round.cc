#include "server/net/io_round.h"

#include <utility>

#include "server/core/replication_hook.h"
#include "server/net/connection.h"
#include "sluice/store.h"

namespace sluice::server {

IoRound::IoRound(asio::io_context& io, Store& store) : io_(io), store_(store) {}

// A group still open is written by its destructor; nobody is answered (shutdown).
IoRound::~IoRound() = default;

CommitGroup& IoRound::group() {
  if (!open_) Open();
  if (!group_) group_.emplace(store_, /*defer_durability=*/true);
  return *group_;
}

void IoRound::Join(std::shared_ptr<Connection> conn) {
  if (!open_) Open();
  joined_.push_back(std::move(conn));
}

void IoRound::Open() {
  open_ = true;
  // Behind every handler already ready on this thread: the round takes in all of them.
  asio::post(io_, [this] { End(); });
}

void IoRound::End() {
  open_ = false;
  Status written = Status::Ok();
  if (group_) {
    written = group_->Flush();
    group_.reset();
  }
  // Joined connections may start the next round while being answered: take the list first.
  std::vector<std::shared_ptr<Connection>> joined;
  joined.swap(joined_);
  if (!written.ok()) return Finish(joined, written, /*write_failed=*/true);
  // replica-ack-writes: the round's replies also wait for the replicas' acknowledgements of
  // its writes (docs/replication.md), after its durability.
  ReplicationHook* repl = GetReplicationHook();
  const int64_t repl_offset = repl != nullptr ? repl->TakeWrittenOffset() : 0;
  if (repl_offset > 0) {
    Status s = store_.durability() == Durability::kAlways
                   ? store_.AwaitDurable(store_.DurabilityTicket())
                   : store_.FlushLog(store_.DurabilityTicket());
    repl->WhenAcked(repl_offset, [&io = io_, joined = std::move(joined), s]() mutable {
      asio::post(io, [joined = std::move(joined), s = std::move(s)]() mutable {
        Finish(joined, s, /*write_failed=*/false);
      });
    });
    return;
  }
  if (store_.durability() != Durability::kAlways) {
    // The ticket covers the round's writes and what its reads saw, as below.
    Finish(joined, store_.FlushLog(store_.DurabilityTicket()), /*write_failed=*/false);
    joined.clear();
    if (joined_.empty()) joined_.swap(joined);  // keeps the capacity: no allocation per round
    return;
  }
  // The ticket is taken after the round's write: it covers every write of the round and every
  // write its reads could have seen, so no reply reveals what a power loss could still erase.
  const uint64_t ticket = store_.DurabilityTicket();
  const uint64_t id = ++last_waiting_id_;
  waiting_.push_back(Waiting{id, ticket, std::move(joined)});
  store_.WhenDurable(ticket, [this, &io = io_, id](Status s) {
    // On the store's syncer thread (or inline): answer on this thread (where this round lives:
    // the handler runs only while its io_context does).
    asio::post(io, [this, id, s = std::move(s)] { FinishWaiting(id, s); });
  });
}

void IoRound::FinishWaiting(uint64_t id, const Status& status) {
  for (size_t i = 0; i < waiting_.size(); ++i) {
    if (waiting_[i].id != id) continue;
    std::vector<std::shared_ptr<Connection>> joined = std::move(waiting_[i].joined);
    waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(i));
    return Finish(joined, status, /*write_failed=*/false);
  }
  // Answered already by DeliverWhileBusy.
}

void IoRound::DeliverWhileBusy() {
  // Rounds that ended before the script, waiting for their fsync (appendfsync always): their
  // answers would be posted behind the script.
  std::vector<Waiting> waiting;
  waiting.swap(waiting_);
  for (Waiting& w : waiting) {
    Finish(w.joined, store_.AwaitDurable(w.ticket), /*write_failed=*/false,
           /*continue_later=*/true);
  }
  if (joined_.empty() || (group_ && (!group_->empty() || !group_->status().ok()))) return;
  if (ReplicationHook* repl = GetReplicationHook(); repl != nullptr && repl->engaged()) return;
  const uint64_t ticket = store_.DurabilityTicket();
  const Status s = store_.durability() == Durability::kAlways ? store_.AwaitDurable(ticket)
                                                              : store_.FlushLog(ticket);
  std::vector<std::shared_ptr<Connection>> joined;
  joined.swap(joined_);
  Finish(joined, s, /*write_failed=*/false, /*continue_later=*/true);
}

void IoRound::Finish(std::vector<std::shared_ptr<Connection>>& joined, const Status& status,
                     bool write_failed, bool continue_later) {
  for (auto& conn : joined) conn->RoundDone(status, write_failed, continue_later);
}

}  // namespace sluice::server
