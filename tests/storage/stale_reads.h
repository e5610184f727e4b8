// A counting writer against readers and a flusher, for the record cache's tests: the writer
// writes 1..kCountTo (write(i) returns once i is acknowledged) while one reader that holds the
// key's lock and one that does not read the value (read(locked)), and the store's memtables are
// flushed into table files again and again (checkpoints under dir). Returns how many reads saw
// a value older than one acknowledged before the read began (must be 0), or no value at all.
#pragma once

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <thread>

#include "test_util.h"

namespace sluice::testing {

inline constexpr int kCountTo = 3000;

inline int CountStaleReads(Store& s, TempDir& dir, const std::function<void(int)>& write,
                           const std::function<std::optional<std::string>(bool)>& read) {
  std::atomic<int> acked{0};
  std::atomic<bool> done{false};
  std::atomic<int> stale{0};
  auto reader = [&](bool locked) {
    while (!done.load()) {
      const int floor = acked.load();
      const std::optional<std::string> got = read(locked);
      if (!got || std::stoi(*got) < floor) stale.fetch_add(1);
    }
  };
  std::thread locked_reader(reader, true), free_reader(reader, false);
  std::thread flusher([&] {
    for (int i = 0; !done.load(); ++i) {
      REQUIRE(s.Checkpoint(dir.sub("c" + std::to_string(i))).ok());
      std::filesystem::remove_all(dir.sub("c" + std::to_string(i)));
    }
  });
  for (int i = 1; i <= kCountTo; ++i) {
    write(i);
    acked.store(i);
    if (i % 100 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  done.store(true);
  locked_reader.join();
  free_reader.join();
  flusher.join();
  return stale.load();
}

}  // namespace sluice::testing
