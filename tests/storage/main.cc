// doctest main, plus child-process modes the durability tests start by re-executing this
// binary (a clean process, so a crash can be simulated with SIGKILL):
//   SLUICE_TEST_CHILD=write   SLUICE_TEST_PATH=dir SLUICE_TEST_MODE=always|everysec|no
//       opens the store, writes keys k0..k99 (and INCRs "counter" 100 times), then SIGKILLs
//       itself: every acknowledged write must survive.
//   SLUICE_TEST_CHILD=deferred  SLUICE_TEST_PATH=dir SLUICE_TEST_MODE=always|everysec|no
//       first, after another thread committed a unit with deferred durability and never made
//       it durable, one ordinary write ("outside"); then the same writes as `write` in units
//       of 10 with deferred durability, each batch acknowledged when AwaitDurable(ticket)
//       returns; then SIGKILLs itself.
//   SLUICE_TEST_CHILD=open    SLUICE_TEST_PATH=dir
//       tries to open the store; exit 0 when it fails with kIOError, 2 when it opened.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <csignal>
#include <cstdlib>
#include <string>
#include <thread>

#include "sluice/store.h"

namespace {

sluice::Durability ModeFromName(const std::string& name) {
  if (name == "always") return sluice::Durability::kAlways;
  if (name == "no") return sluice::Durability::kNo;
  return sluice::Durability::kEverySec;
}

int RunChild(const std::string& what) {
  sluice::Options o;
  o.path = std::getenv("SLUICE_TEST_PATH");
  const char* mode = std::getenv("SLUICE_TEST_MODE");
  o.durability = ModeFromName(mode ? mode : "");
  auto opened = sluice::Store::Open(o);
  if (what == "open") {
    if (opened.ok()) return 2;
    return opened.status().code() == sluice::Code::kIOError ? 0 : 3;
  }
  if (!opened.ok()) return 4;
  auto& store = *opened.value();
  const bool deferred = what == "deferred";
  const sluice::TransactionOptions defer{.defer_durability = true};
  if (deferred) {
    // Another thread's unacknowledged deferred write must not hold back an ordinary write.
    std::thread([&] {
      sluice::Store::Transaction unit(store, {}, defer);
      (void)unit.Set(0, "in-deferred-unit", "x", sluice::SetOptions{});
      (void)unit.Commit();
    }).join();
    if (!store.Set(0, "outside", "y", sluice::SetOptions{}).ok()) return 9;
  }
  for (int i = 0; i < 100; i += 10) {
    for (int j = i; j < i + 10; ++j) {
      std::string k = "k" + std::to_string(j);
      if (deferred) {
        sluice::Store::Transaction unit(store, {}, defer);
        if (!unit.Set(0, k, "v" + std::to_string(j), sluice::SetOptions{}).ok()) return 5;
        if (!unit.IncrBy(0, "counter", 1).ok()) return 6;
        if (!unit.Commit().ok()) return 10;
      } else {
        if (!store.Set(0, k, "v" + std::to_string(j), sluice::SetOptions{}).ok()) return 5;
        if (!store.IncrBy(0, "counter", 1).ok()) return 6;
      }
    }
    // The batch's writes are acknowledged here.
    if (deferred && !store.AwaitDurable(store.DurabilityTicket()).ok()) return 8;
  }
  std::raise(SIGKILL);  // no destructor, no final sync: like kill -9 after the replies
  return 7;
}

}  // namespace

int main(int argc, char** argv) {
  if (const char* child = std::getenv("SLUICE_TEST_CHILD")) return RunChild(child);
  doctest::Context context(argc, argv);
  return context.run();
}
