// Embedding Sluice without the server: open a sluice::Store and use a GCRA rate limiter from
// plain C++. Links only the engine library (CMake target `sluice`, or `Sluice::sluice` after
// find_package(Sluice)).
//
// Usage: sluice-embed-example [data-dir]
//   With no directory, a fresh temporary one is used and removed at the end. State persists:
//   run it twice with the same directory and the second run starts from the first run's TAT.
#include <sluice/limiter.h>
#include <sluice/store.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

namespace {

// Makes a fresh directory under $TMPDIR (or /tmp).
std::string MakeTempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/sluice-embed-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) return "";
  return pattern;
}

void PrintDecision(int call, const sluice::limiter::Decision& d) {
  // Replies round times up to whole milliseconds, as the server does.
  std::printf("call %d: %s remaining=%lld retry_after_ms=%lld reset_after_ms=%lld limit=%lld\n",
              call, d.allowed ? "allowed" : "denied ", static_cast<long long>(d.remaining),
              static_cast<long long>(sluice::limiter::CeilMs(d.retry_after_ns)),
              static_cast<long long>(sluice::limiter::CeilMs(d.reset_after_ns)),
              static_cast<long long>(d.limit));
}

// A per-user limit and a shared per-service limit, taken together or not at all: one unit of
// work locks both keys, and a denial of either rolls both back.
int TwoLimitsAtOnce(sluice::Store& store, const sluice::limiter::GcraParams& params) {
  const sluice::KeyRef keys[] = {{0, "api:bob"}, {0, "api:service"}};
  for (int call = 1; call <= 4; ++call) {
    sluice::Store::Transaction txn(store, keys);
    auto user = txn.GcraTake(0, "api:bob", params, /*cost=*/1);
    auto service = txn.GcraTake(0, "api:service", params, /*cost=*/2);
    if (!user.ok() || !service.ok()) {
      std::fprintf(stderr, "GcraTake in a transaction failed\n");
      return 1;
    }
    const bool both = user->allowed && service->allowed;
    if (!both) txn.Rollback();  // neither limit is consumed
    sluice::Status committed = txn.Commit();
    if (!committed.ok()) {
      std::fprintf(stderr, "Commit: %s\n", committed.ToString().c_str());
      return 1;
    }
    std::printf("transaction %d: user %s, service %s -> %s\n", call,
                user->allowed ? "allowed" : "denied", service->allowed ? "allowed" : "denied",
                both ? "both taken" : "nothing taken");
  }
  return 0;
}

int Run(const std::string& dir) {
  sluice::Options options;
  options.path = dir;
  options.durability = sluice::Durability::kAlways;  // every take is fsynced before it returns
  auto opened = sluice::Store::Open(options);
  if (!opened.ok()) {
    std::fprintf(stderr, "open %s: %s\n", dir.c_str(), opened.status().ToString().c_str());
    return 1;
  }
  std::unique_ptr<sluice::Store> store = std::move(opened).value();

  // The equivalent of `GCRA.TAKE api:alice 5 1s BURST 3`: 5 per second, bursts of up to 3.
  sluice::limiter::GcraParams params;
  std::string error = sluice::limiter::MakeGcraParams(/*quota=*/5,
                                                      /*period_ns=*/sluice::limiter::kNsPerSecond,
                                                      /*capacity=*/3, &params);
  if (!error.empty()) {
    std::fprintf(stderr, "params: %s\n", error.c_str());
    return 1;
  }
  for (int call = 1; call <= 5; ++call) {
    auto decision = store->GcraTake(/*db=*/0, "api:alice", params, /*cost=*/1);
    if (!decision.ok()) {
      std::fprintf(stderr, "GcraTake: %s\n", decision.status().ToString().c_str());
      return 1;
    }
    PrintDecision(call, *decision);
  }
  // The state is an ordinary key: a string holding the TAT in ns, expiring when fresh again.
  auto tat = store->Get(0, "api:alice");
  auto pttl = store->PTtl(0, "api:alice");
  if (tat.ok() && tat->has_value() && pttl.ok()) {
    std::printf("key api:alice = %s (TAT, ns since the epoch), pttl = %lld ms\n", (*tat)->c_str(),
                static_cast<long long>(*pttl));
  }
  return TwoLimitsAtOnce(*store, params);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 2) {
    std::fprintf(stderr, "usage: %s [data-dir]\n", argv[0]);
    return 2;
  }
  const bool temporary = argc < 2;
  const std::string dir = temporary ? MakeTempDir() : argv[1];
  if (dir.empty()) {
    std::perror("mkdtemp");
    return 1;
  }
  const int rc = Run(dir);
  if (temporary) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  return rc;
}
