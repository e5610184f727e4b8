// doctest main, plus child-process modes the durability tests start by re-executing this
// binary (a clean process, so a crash can be simulated with SIGKILL):
//   SLUICE_TEST_CHILD=write   SLUICE_TEST_PATH=dir SLUICE_TEST_MODE=always|everysec|no
//       opens the store, writes keys k0..k99 (and INCRs "counter" 100 times), then SIGKILLs
//       itself: every acknowledged write must survive.
//   SLUICE_TEST_CHILD=scoped  SLUICE_TEST_PATH=dir SLUICE_TEST_MODE=always|everysec|no
//       first, while another thread holds an open scope with an unflushed write, one write
//       outside any scope ("outside"); then the same writes as `write` in SyncScopes of 10
//       (acknowledged when Finish() returns); then SIGKILLs itself (the holder still waiting).
//   SLUICE_TEST_CHILD=open    SLUICE_TEST_PATH=dir
//       tries to open the store; exit 0 when it fails with kIOError, 2 when it opened.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <mutex>
#include <optional>
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
  const bool scoped = what == "scoped";
  std::mutex mu;
  std::condition_variable cv;
  bool written = false;
  if (scoped) {
    // Another thread's open scope must not hold back a write made outside any scope.
    std::thread([&] {
      sluice::Store::SyncScope open_scope(store);
      (void)store.Set(0, "in-open-scope", "x", sluice::SetOptions{});
      std::unique_lock<std::mutex> l(mu);
      written = true;
      cv.notify_all();
      cv.wait(l, [] { return false; });  // the process dies with the scope still open
    }).detach();
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [&] { return written; });
    l.unlock();
    if (!store.Set(0, "outside", "y", sluice::SetOptions{}).ok()) return 9;
  }
  for (int i = 0; i < 100; i += 10) {
    std::optional<sluice::Store::SyncScope> scope;
    if (scoped) scope.emplace(store);
    for (int j = i; j < i + 10; ++j) {
      std::string k = "k" + std::to_string(j);
      if (!store.Set(0, k, "v" + std::to_string(j), sluice::SetOptions{}).ok()) return 5;
      if (!store.IncrBy(0, "counter", 1).ok()) return 6;
    }
    if (scope && !scope->Finish().ok()) return 8;  // the scope's writes are acknowledged here
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
