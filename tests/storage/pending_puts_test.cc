// PendingPuts (storage/engine/pending_puts.h) over an IndexedBatch, against a model: random
// staged puts, direct puts and deletes of a few keys in two column families, slot evictions,
// moves of one family's slots into the batch, and marks saved, restored after a "rolled back
// member" and advanced after a kept one. After every step, each key's newest value (the slot's,
// else the batch's) must be the model's; at the end, the batch written to a database must hold
// exactly the model's keys.
#include "storage/engine/pending_puts.h"

#include <doctest/doctest.h>
#include <rocksdb/db.h>

#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "storage/engine/indexed_batch.h"
#include "test_util.h"

namespace sluice::testing {
namespace {

using internal::IndexedBatch;
using internal::PendingPuts;
using Model = std::map<std::pair<uint32_t, std::string>, std::optional<std::string>>;

// The unit's view of (cf, key): the pending slot, else the batch's latest record.
std::optional<std::string> Newest(const PendingPuts& p, const IndexedBatch& b,
                                  rocksdb::ColumnFamilyHandle* cf, const std::string& key) {
  if (const std::string* v = p.Find(cf, key)) return *v;
  std::string_view staged;
  switch (b.Find(cf->GetID(), key, &staged)) {
    case IndexedBatch::Staged::kPut:
      return std::string(staged);
    case IndexedBatch::Staged::kDeleted:
    case IndexedBatch::Staged::kNone:
      break;
  }
  return std::nullopt;
}

// An empty batch and no slots, over a database of two families (the focused cases below).
struct SlotsOverBatch {
  TempDir dir;
  TwoFamilyDb d{dir.sub("db")};
  std::pair<IndexedBatch, PendingPuts> parts;
};

}  // namespace

TEST_CASE("PendingPuts keeps each key's newest write through evictions, moves and marks") {
  TempDir dir;
  TwoFamilyDb d(dir.sub("db"));
  const std::vector<std::string> keys = {"a", "b", "c", "d", "e", "f", "g"};
  std::mt19937_64 rng(11);
  for (int round = 0; round < 200; ++round) {
    IndexedBatch batch;
    PendingPuts pending;
    PendingPuts::Saved saved;
    Model model, model_at_mark;
    bool marked = false;
    const auto check = [&] {
      for (auto* cf : d.cfs) {
        for (const auto& k : keys) {
          auto it = model.find({cf->GetID(), k});
          const std::optional<std::string> want = it == model.end() ? std::nullopt : it->second;
          CHECK(Newest(pending, batch, cf, k) == want);
        }
      }
    };
    for (int step = 0; step < 60; ++step) {
      rocksdb::ColumnFamilyHandle* cf = d.cfs[rng() % 2];
      const std::string& k = keys[rng() % keys.size()];
      const std::string v = "v" + std::to_string(step) + "-" + std::to_string(round);
      switch (rng() % 10) {
        case 0:
        case 1:
        case 2:
          pending.Stage(cf, k, batch)->assign(v);
          model[{cf->GetID(), k}] = v;
          break;
        case 3:  // a direct Put: newer than the slot, which goes
          pending.Drop(cf, k);
          batch.Put(cf, k, v);
          model[{cf->GetID(), k}] = v;
          break;
        case 4:
          pending.Drop(cf, k);
          batch.Delete(cf, k);
          model[{cf->GetID(), k}] = std::nullopt;
          break;
        case 5:  // an iterator over all of cf
          pending.MoveRangeToBatch(batch, cf, "", "\xff");
          break;
        case 6:  // a member commits: the mark moves on
          pending.MoveLargeToBatch(batch);
          if (marked) REQUIRE(batch.PopSavePoint().ok());
          batch.SetSavePoint();
          pending.Save(&saved);
          model_at_mark = model;
          marked = true;
          break;
        case 7:  // a member rolls back to the mark
          if (!marked) break;
          pending.Restore(saved);
          REQUIRE(batch.RollbackToSavePoint().ok());
          batch.SetSavePoint();
          model = model_at_mark;
          break;
        case 8:
          CHECK(pending.Bytes() <= PendingPuts::kSlots * 64);
          break;
        case 9: {  // an iterator over a range of cf: only the slots inside it move
          std::string lower = keys[rng() % keys.size()], upper = keys[rng() % keys.size()];
          if (upper < lower) std::swap(lower, upper);
          pending.MoveRangeToBatch(batch, cf, lower, upper);
          for (const auto& key : keys) {
            if (key >= lower && key < upper) CHECK(pending.Find(cf, key) == nullptr);
          }
          break;
        }
      }
      check();
    }
    // The commit: every slot into the batch, then the batch into a database of its own.
    pending.MoveToBatch(batch);
    CHECK(pending.empty());
    check();
    TempDir db_dir;
    TwoFamilyDb out(db_dir.sub("db"));
    REQUIRE(out.db->Write(rocksdb::WriteOptions(), batch.batch()).ok());
    for (size_t c = 0; c < d.cfs.size(); ++c) {
      for (const auto& k : keys) {
        auto it = model.find({d.cfs[c]->GetID(), k});
        const std::optional<std::string> want = it == model.end() ? std::nullopt : it->second;
        std::string got;
        const rocksdb::Status s = out.db->Get(rocksdb::ReadOptions(), out.cfs[c], k, &got);
        CHECK((s.ok() ? std::optional<std::string>(got) : std::nullopt) == want);
      }
    }
  }
}

TEST_CASE("PendingPuts moves into the batch only the slots an iterator's range covers") {
  SlotsOverBatch f;
  auto& [batch, pending] = f.parts;
  auto* cf = f.d.cfs[0];
  auto* other = f.d.cfs[1];
  pending.Stage(cf, "e1", batch)->assign("entry");  // inside [e, f)
  pending.Stage(cf, "f", batch)->assign("upper");   // the upper bound itself: outside
  pending.Stage(cf, "g", batch)->assign("group");
  pending.Stage(other, "e2", batch)->assign("other family");
  pending.MoveRangeToBatch(batch, cf, "e", "f");
  CHECK(batch.Count() == 1);
  CHECK(pending.Find(cf, "e1") == nullptr);
  std::string_view staged;
  CHECK(batch.Find(cf->GetID(), "e1", &staged) == IndexedBatch::Staged::kPut);
  CHECK(staged == "entry");
  CHECK(*pending.Find(cf, "f") == "upper");
  CHECK(*pending.Find(cf, "g") == "group");
  CHECK(*pending.Find(other, "e2") == "other family");
}

TEST_CASE("PendingPuts holds kSlots keys and moves the least recently written one out") {
  SlotsOverBatch f;
  auto& [batch, pending] = f.parts;
  auto* cf = f.d.cfs[0];
  for (const char* k : {"a", "b", "c", "d"}) pending.Stage(cf, k, batch)->assign(k);
  pending.Stage(cf, "a", batch)->assign("a2");  // "b" is now the least recently written
  CHECK(batch.Count() == 0);
  pending.Stage(cf, "e", batch)->assign("e");
  CHECK(batch.Count() == 1);
  std::string_view staged;
  CHECK(batch.Find(cf->GetID(), "b", &staged) == IndexedBatch::Staged::kPut);
  CHECK(staged == "b");
  CHECK(pending.Find(cf, "b") == nullptr);
  CHECK(*pending.Find(cf, "a") == "a2");
  CHECK(pending.Find(f.d.cfs[1], "a") == nullptr);  // another family's "a"
}

}  // namespace sluice::testing
