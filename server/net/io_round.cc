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
  store_.WhenDurable(store_.DurabilityTicket(),
                     [&io = io_, joined = std::move(joined)](Status s) mutable {
                       // On the store's syncer thread (or inline): answer on this thread.
                       asio::post(io, [joined = std::move(joined), s = std::move(s)]() mutable {
                         Finish(joined, s, /*write_failed=*/false);
                       });
                     });
}

void IoRound::Finish(std::vector<std::shared_ptr<Connection>>& joined, const Status& status,
                     bool write_failed) {
  for (auto& conn : joined) conn->RoundDone(status, write_failed);
}

}  // namespace sluice::server
