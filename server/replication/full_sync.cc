// Full sync: pinning a snapshot at a stream offset, encoding it as RDB in the background, and
// loading one on a replica.
#include "server/replication/full_sync.h"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "server/core/command.h"
#include "server/core/loading_state.h"
#include "server/core/logging.h"
#include "server/replication/replication.h"
#include "sluice/bulk_load.h"
#include "sluice/key_walk.h"
#include "sluice/transaction.h"
#include "storage/formats/rdb_file.h"
#include "storage/formats/rdb_writer.h"

namespace sluice::server::replication {

namespace {

constexpr std::string_view kEntryAux = "sluice-entry";

// db, kind, expiry, key length, then the key and the payload: one AUX value.
std::string EncodeEntry(int db, std::string_view key, const Store::Transaction::RawEntry& e) {
  std::string v = std::to_string(db) + ":" + std::to_string(static_cast<int>(e.kind)) + ":" +
                  std::to_string(e.expire_at_ms) + ":" + std::to_string(key.size()) + ":";
  v.append(key);
  v.append(e.payload);
  return v;
}

bool DecodeEntry(std::string_view v, int* db, std::string* key, Store::Transaction::RawEntry* e) {
  int64_t fields[4];
  for (int64_t& f : fields) {
    const size_t colon = v.find(':');
    if (colon == std::string_view::npos) return false;
    try {
      f = std::stoll(std::string(v.substr(0, colon)));
    } catch (...) {
      return false;
    }
    v.remove_prefix(colon + 1);
  }
  if (fields[0] < 0 || fields[0] >= kNumDatabases || fields[3] < 0 ||
      static_cast<size_t>(fields[3]) > v.size()) {
    return false;
  }
  *db = static_cast<int>(fields[0]);
  e->kind = static_cast<ValueKind>(fields[1]);
  e->expire_at_ms = fields[2];
  key->assign(v.substr(0, static_cast<size_t>(fields[3])));
  e->payload.assign(v.substr(static_cast<size_t>(fields[3])));
  return true;
}

}  // namespace

Status EncodeRdbKeys(Store& store, formats::RdbWriter& w, LimiterEntries limiters,
                     EncodeStats* stats) {
  WholeValue string;  // reused: a string key's value, copied out of the walk's view
  string.kind = ValueKind::kString;
  for (int db = 0; db < kNumDatabases; ++db) {
    // One unit and one sequential walk per database: a single-entry key comes with its value;
    // a collection is read whole by the unit.
    Store::Transaction t(store, {}, UnitOptions(/*all_keys=*/false, /*isolate_reads=*/false));
    bool selected = false;
    Status s = WalkKeys(t, db, [&](const WalkedKey& k) -> Status {
      if (k.kind == ValueKind::kLeaky || k.kind == ValueKind::kSliding ||
          k.kind == ValueKind::kConc) {
        if (limiters == LimiterEntries::kSkip) {
          ++stats->skipped_limiters;
          return Status::Ok();
        }
        Store::Transaction::RawEntry e{k.kind, k.expire_at_ms, std::string(k.payload)};
        w.Aux(kEntryAux, EncodeEntry(db, k.key, e));
        ++stats->keys;
        return Status::Ok();
      }
      if (!selected) {
        w.SelectDb(db);
        selected = true;
      }
      if (k.kind == ValueKind::kString) {
        string.string.assign(k.payload);
        w.Key(k.key, string, k.expire_at_ms);
        ++stats->keys;
        return Status::Ok();
      }
      auto whole = t.ReadWhole(db, k.key);
      if (!whole.ok()) return whole.status();
      if (!whole->has_value()) return Status::Ok();
      w.Key(k.key, **whole, k.expire_at_ms);
      ++stats->keys;
      return Status::Ok();
    });
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

Status EncodeRdb(Store& store, const std::vector<std::string>& functions, const std::string& replid,
                 int64_t offset, std::string* out, EncodeStats* stats) {
  formats::RdbWriter w(out);
  w.Begin(ServerState::RealNowMs() / 1000, replid, offset);
  for (const std::string& code : functions) w.Function(code);
  if (Status s = EncodeRdbKeys(store, w, LimiterEntries::kAsAux, stats); !s.ok()) return s;
  w.Finish();
  return Status::Ok();
}

Status LoadRdb(Store& store, std::string_view rdb, int64_t* keys,
               std::vector<std::string>* functions, int64_t key_load_delay_us) {
  {
    Store::Transaction all(store, {}, UnitOptions(/*all_keys=*/true, /*isolate_reads=*/false));
    if (Status s = all.FlushAll(); !s.ok()) return s;
    if (Status s = all.Commit(); !s.ok()) return s;
  }
  *keys = 0;
  // The store is empty now and an RDB holds each key once per database: a bulk load.
  BulkLoad load(store);
  formats::RdbVisitor visit;
  const int64_t now = ServerState::RealNowMs();
  Status failed;
  visit.key = [&](formats::RdbKey& k) -> Status {
    NoteLoadedBytes(static_cast<int64_t>(k.end_offset));
    KeyLoadDelay(key_load_delay_us);
    if (k.expire_at_ms != 0 && k.expire_at_ms <= now) return Status::Ok();  // as Redis
    ++*keys;
    return load.Add(k.db, k.key, k.value, k.expire_at_ms);
  };
  visit.aux = [&](std::string_view name, std::string_view value) -> Status {
    if (name != kEntryAux) return Status::Ok();
    int db = 0;
    std::string key;
    Store::Transaction::RawEntry e;
    if (!DecodeEntry(value, &db, &key, &e)) return Status::Corruption("bad sluice-entry field");
    // The value is a view into the file when the reader hands it over unchanged: progress.
    const uintptr_t at = reinterpret_cast<uintptr_t>(value.data()) + value.size();
    const uintptr_t begin = reinterpret_cast<uintptr_t>(rdb.data());
    if (at > begin && at <= begin + rdb.size()) NoteLoadedBytes(static_cast<int64_t>(at - begin));
    KeyLoadDelay(key_load_delay_us);
    ++*keys;
    return load.AddEntry(db, key, e);
  };
  visit.function = [&](std::string_view code) {
    functions->emplace_back(code);
    return Status::Ok();
  };
  if (Status s = formats::ReadRdbFile(rdb, visit); !s.ok()) return s;
  return load.Finish();
}

void Replication::StartFullSync(ReplicaEntry& entry) {
  const uint64_t id = entry.id;
  std::lock_guard lock(mu_);
  for (size_t i = 0; i < syncs_.size();) {
    if (syncs_[i].second->load()) {
      syncs_[i].first.join();
      syncs_.erase(syncs_.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
  auto done = std::make_shared<std::atomic<bool>>(false);
  std::thread t([this, id, done] {
    struct MarkDone {
      std::atomic<bool>& flag;
      ~MarkDone() { flag.store(true); }
    } mark{*done};
    const int64_t start = ServerState::RealNowMs();
    const std::string dir_base = server_.config().dir + "/repl-sync";
    std::error_code ec;
    std::filesystem::create_directories(dir_base, ec);
    const std::string dir = dir_base + "/" + std::to_string(start) + "-" + std::to_string(id);
    std::filesystem::remove_all(dir, ec);
    int64_t offset = 0;
    std::string replid;
    std::vector<std::string> functions;
    Status s;
    {
      // Every stripe held: no unit is between its write and its OnCommit, so the checkpoint
      // holds exactly the stream up to `offset`.
      Store::Transaction all(store_, {}, UnitOptions(/*all_keys=*/true, false));
      {
        std::lock_guard l(mu_);
        ReplicaEntry* e = nullptr;
        for (auto& r : replicas_) {
          if (r->id == id) e = r.get();
        }
        if (e == nullptr) return;
        e->held.clear();
        offset = backlog_->offset();
        replid = replid_;
        // FUNCTION LOAD/DELETE/... append to the stream under mu_ too: the libraries as of
        // `offset` (one changed meanwhile is changed again by the stream, harmlessly).
        if (function_codes_) functions = function_codes_();
        last_db_ = -1;  // the stream SELECTs again after the snapshot
        const OutputBufferLimit none{};
        e->client->outbox.PushEncoded(
            "+FULLRESYNC " + replid + " " + std::to_string(offset) + "\r\n", none);
      }
      s = store_.Checkpoint(dir);
    }
    std::string rdb;
    EncodeStats stats;
    if (s.ok()) {
      Options o;
      o.path = dir;
      o.active_expiry = false;
      Result<std::unique_ptr<Store>> snap = Store::Open(o);
      if (snap.ok()) {
        s = EncodeRdb(**snap, functions, replid, offset, &rdb, &stats);
      } else {
        s = snap.status();
      }
    }
    std::filesystem::remove_all(dir, ec);
    if (!s.ok()) {
      LogError("full sync failed: " + s.ToString());
      server_.clients().ForEachLocked([&](ClientRegistry::Entry& e) {
        if (e.client->id == id && e.kill) e.kill();
      });
      return;
    }
    LogInfo("full sync: " + std::to_string(stats.keys) + " keys, " + std::to_string(rdb.size()) +
            " bytes of RDB in " + std::to_string(ServerState::RealNowMs() - start) + " ms");
    FinishFullSync(id, std::move(rdb), offset, false);
  });
  syncs_.emplace_back(std::move(t), std::move(done));
}

void Replication::FinishFullSync(uint64_t id, std::string rdb, int64_t, bool) {
  std::lock_guard lock(mu_);
  for (auto& r : replicas_) {
    if (r->id != id) continue;
    const OutputBufferLimit none{};
    r->client->outbox.PushEncoded("$" + std::to_string(rdb.size()) + "\r\n", none);
    r->client->outbox.PushEncoded(rdb, none);
    if (!r->held.empty()) r->client->outbox.PushEncoded(r->held, none);
    r->held.clear();
    r->held.shrink_to_fit();
    r->state = ReplicaEntry::State::kOnline;
    r->ack_ms = ServerState::RealNowMs();
    return;
  }
}

}  // namespace sluice::server::replication
