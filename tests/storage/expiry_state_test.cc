// The active expiry cycle's state across a restart (storage/engine/expiry_state.cc): a clean close
// saves what the cycle knows and the next open restores it instead of walking the keyspace; a
// state the store was written to since is not used. The cycle is driven by hand, with the
// manual clock.
#include "storage/engine/expiry_state.h"

#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>

#include "test_util.h"

namespace sluice::testing {
namespace {

using internal::ExpiryState;

void SetMany(Store& s, const std::string& prefix, int n, int64_t at_ms) {
  for (int i = 0; i < n; ++i) REQUIRE(s.Set(0, prefix + std::to_string(i), "v", SetAt(at_ms)).ok());
}

bool Exists(Store& s, const std::string& key) {
  auto got = s.Get(0, key);
  REQUIRE(got.ok());
  return got->has_value();
}

}  // namespace

TEST_CASE("expiry state: encodes and decodes, and refuses anything but a whole state") {
  ExpiryState state;
  state.seq = 123456789012;
  state.pass_due_ms = kT0Ms + 5;
  state.pass_active = true;
  state.pass_cursor = std::string("\0\x12\x34", 3) + "cursor";
  state.pass_done = "done";
  state.due = {{"a", kT0Ms, true}, {std::string(300, 'k'), kT0Ms + 1, false}, {"", -7, true}};
  const std::string bytes = internal::EncodeExpiryState(state);
  auto back = internal::DecodeExpiryState(bytes);
  REQUIRE(back.has_value());
  CHECK(back->seq == state.seq);
  CHECK(back->pass_due_ms == state.pass_due_ms);
  CHECK(back->pass_active);
  CHECK(back->pass_cursor == state.pass_cursor);
  CHECK(back->pass_done == "done");
  REQUIRE(back->due.size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    CHECK(back->due[i].raw_key == state.due[i].raw_key);
    CHECK(back->due[i].at_ms == state.due[i].at_ms);
    CHECK(back->due[i].exact == state.due[i].exact);
  }
  for (size_t n = 0; n < bytes.size(); ++n) {
    CAPTURE(n);
    CHECK(!internal::DecodeExpiryState(bytes.substr(0, n)).has_value());
  }
  CHECK(!internal::DecodeExpiryState(bytes + "x").has_value());
  std::string other_version = bytes;
  other_version[0] = 2;
  CHECK(!internal::DecodeExpiryState(other_version).has_value());
  std::string huge_count = internal::EncodeExpiryState(ExpiryState{});
  huge_count.back() = '\x7f';  // 127 entries announced, none there
  CHECK(!internal::DecodeExpiryState(huge_count).has_value());
  // A damaged count beside a few bytes: refused.
  std::string damaged = internal::EncodeExpiryState(ExpiryState{});
  damaged.pop_back();
  internal::AppendVarint(&damaged, uint64_t{1} << 40);
  damaged.append(100, '\0');
  CHECK(!internal::DecodeExpiryState(damaged).has_value());
}

TEST_CASE("expiry state: a clean restart keeps what the cycle knew, so no pass walks") {
  Fixture f;
  RunCycles(*f.store);  // the first open's pass, over nothing
  SetMany(*f.store, "t", 1000, kT0Ms + 3'600'000);
  for (int i = 0; i < 10; ++i)
    REQUIRE(f.store->Set(0, "p" + std::to_string(i), "v", SetPlain()).ok());
  f.Reopen();  // the 1000 expiries were still in the intake: the close takes them too
  Store& s = *f.store;
  CHECK(s.impl().expiry_due().size() == 1000);
  CHECK(RunCycles(s) == 0);
  CHECK(s.GetStats().expiry_scans == 0);
  f.AdvanceMs(3'600'001);
  CHECK(RunCycles(s) == 1000);
  CHECK(s.GetStats().expiry_scans == 0);  // removed from the restored due list, with no walk
  CHECK(*s.DbSize(0) == 10);
  CHECK(s.Keyspace(0)->expires == 0);
  RequireConsistent(s);
}

TEST_CASE("expiry state: a key written since its entry was seen is read again when due") {
  Fixture f;
  RunCycles(*f.store);
  Store& s0 = *f.store;
  REQUIRE(s0.Set(0, "later", "v", SetAt(kT0Ms + 1000)).ok());
  REQUIRE(s0.Set(0, "persisted", "v", SetAt(kT0Ms + 1000)).ok());
  REQUIRE(s0.Set(0, "gone", "v", SetAt(kT0Ms + 1000)).ok());
  REQUIRE(s0.Set(0, "kept", "v", SetAt(kT0Ms + 1000)).ok());
  RunCycles(s0);  // all four in the due list, expiring at +1000
  // A later expiry hands nothing to the cycle (the +1000 entry covers it); two others lose theirs.
  REQUIRE(s0.Set(0, "later", "v2", SetAt(kT0Ms + 5000)).ok());
  REQUIRE(s0.Set(0, "persisted", "v2", SetPlain()).ok());
  const std::string_view gone[] = {"gone"};
  REQUIRE(*s0.Del(0, gone) == 1);
  f.Reopen();
  Store& s = *f.store;
  CHECK(s.impl().expiry_due().size() == 4);
  f.AdvanceMs(2000);
  CHECK(RunCycles(s) == 1);  // "kept"; the other three were read again
  CHECK(!Exists(s, "kept"));
  CHECK(Exists(s, "later"));
  CHECK(Exists(s, "persisted"));
  CHECK(s.impl().expiry_due().size() == 1);  // "later", put back with its new expiry
  f.AdvanceMs(3001);
  CHECK(RunCycles(s) == 1);
  CHECK(s.GetStats().expired_keys == 2);
  CHECK(*s.DbSize(0) == 1);
  CHECK(s.GetStats().expiry_scans == 0);
  RequireConsistent(s);
}

TEST_CASE("expiry state: one the store was written to since it was saved is not used") {
  Fixture f;
  RunCycles(*f.store);
  SetMany(*f.store, "t", 100, kT0Ms + 3'600'000);
  // Saved at this close; then a write the saved state knows nothing of (another build, or a
  // crash after an open that wrote): its key expires long before anything the state holds.
  f.PutRaw(0, "early", ValueKind::kString, "v", kT0Ms + 10);
  Store& s = *f.store;
  CHECK(s.impl().expiry_due().size() == 0);
  f.AdvanceMs(11);
  CHECK(RunCycles(s) == 1);  // a pass found it
  CHECK(s.GetStats().expiry_scans > 0);
  CHECK(!Exists(s, "early"));
  CHECK(*s.DbSize(0) == 100);
  f.AdvanceMs(3'600'000);
  CHECK(RunCycles(s) == 100);
  CHECK(*s.DbSize(0) == 0);
  RequireConsistent(s);
}

TEST_CASE("expiry state: a pass under way at close resumes where it stopped") {
  Fixture f;
  RunCycles(*f.store);
  SetMany(*f.store, "t", 300, kT0Ms + 3'600'000);
  f.PutRaw(0, "x", ValueKind::kString, "v");  // the saved state is stale: the next cycle walks
  Store& s0 = *f.store;
  s0.impl().RunExpiryCycle(0);  // out of time after one sample: the pass stops after 20 keys
  REQUIRE(s0.GetStats().expiry_scans == 1);
  REQUIRE(s0.impl().expiry_due().size() == 20);
  f.Reopen();
  Store& s = *f.store;
  CHECK(s.impl().expiry_due().size() == 20);
  s.impl().RunExpiryCycle(0);
  CHECK(s.impl().expiry_due().size() == 40);  // a new pass would have started over: 20
  RunCycles(s);
  CHECK(s.impl().expiry_due().size() == 300);
  f.AdvanceMs(3'600'001);
  CHECK(RunCycles(s) == 300);
  CHECK(*s.DbSize(0) == 1);
  RequireConsistent(s);
}

}  // namespace sluice::testing

namespace sluice::testing {
namespace {

// The data dir as a crash would leave it now: a copy taken while the store is open (every
// record written so far is in the OS's hands: the store flushes its log after each write).
void CopyDir(const std::string& from, const std::string& to) {
  std::filesystem::copy(
      from, to,
      std::filesystem::copy_options::recursive | std::filesystem::copy_options::overwrite_existing);
}

std::optional<ExpiryState> SavedState(Store& s) {
  std::string bytes;
  auto st = s.impl().db()->Get(rocksdb::ReadOptions(), s.impl().meta_cf(),
                               internal::kExpiryStateKey, &bytes);
  if (!st.ok()) return std::nullopt;
  return internal::DecodeExpiryState(bytes);
}

}  // namespace

TEST_CASE("expiry state: one saved while running is used after a crash") {
  Fixture f;
  RunCycles(*f.store);
  SetMany(*f.store, "t", 100, kT0Ms + 3'600'000);
  f.store->impl().SaveExpiryState(/*closing=*/false);
  TempDir crashed;
  CopyDir(f.dir.path(), crashed.path());
  auto s = OpenStore(crashed.path(), f.clock);
  CHECK(s->impl().expiry_due().size() == 100);
  CHECK(RunCycles(*s) == 0);
  CHECK(s->GetStats().expiry_scans == 0);
  f.AdvanceMs(3'600'001);
  CHECK(RunCycles(*s) == 100);
  CHECK(*s->DbSize(0) == 0);
  RequireConsistent(*s);
}

TEST_CASE("expiry state: a write after a save while running makes it stale") {
  Fixture f;
  RunCycles(*f.store);
  SetMany(*f.store, "t", 100, kT0Ms + 3'600'000);
  f.store->impl().SaveExpiryState(/*closing=*/false);
  REQUIRE(f.store->Set(0, "early", "v", SetAt(kT0Ms + 10)).ok());
  TempDir crashed;
  CopyDir(f.dir.path(), crashed.path());
  auto s = OpenStore(crashed.path(), f.clock);
  CHECK(s->impl().expiry_due().size() == 0);
  f.AdvanceMs(11);
  CHECK(RunCycles(*s) == 1);  // found by a pass
  CHECK(s->GetStats().expiry_scans > 0);
  CHECK(*s->DbSize(0) == 100);
  RequireConsistent(*s);
}

TEST_CASE("expiry state: the expiry thread saves it once the store is quiet") {
  TempDir dir;
  auto s = OpenStore(dir.path(), nullptr, /*active_expiry=*/true);
  s->impl().SetQuietSaveTimes(/*after_ms=*/300, /*every_ms=*/600'000);
  const int64_t far = WallClock().NowMs() + 3'600'000;
  SetMany(*s, "t", 10, far);
  // Saved about 0.3 s after the last write (polled, generously bounded).
  std::optional<ExpiryState> saved;
  for (int i = 0; i < 300 && !(saved = SavedState(*s)); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  REQUIRE(saved.has_value());
  CHECK(saved->due.size() == 10);
  CHECK(saved->seq == s->impl().db()->GetLatestSequenceNumber());
  for (const auto& k : saved->due) CHECK(k.at_ms == far);
  // Another quiet spell within every_ms: not saved again.
  REQUIRE(s->Set(0, "u", "v", SetAt(far)).ok());
  std::this_thread::sleep_for(std::chrono::seconds(1));
  CHECK(SavedState(*s)->due.size() == 10);
  CHECK(SavedState(*s)->seq < s->impl().db()->GetLatestSequenceNumber());
}

}  // namespace sluice::testing
