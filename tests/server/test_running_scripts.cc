// RunningScripts: the busy registry's hand-off to busy serving (server/net/busy_serving.h).
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "server/core/running_scripts.h"

namespace sluice::server::testing {

TEST_CASE("ServeWhileBusyOn serves only the thread of a registered script") {
  RunningScripts scripts;
  int woken = 0;
  scripts.set_on_busy([&] { ++woken; });
  int served = 0;
  const std::thread::id here = std::this_thread::get_id();
  CHECK_FALSE(scripts.ServeWhileBusyOn(here, [&] { ++served; }));

  RunningScript script;
  script.thread = here;
  scripts.Add(&script);
  CHECK(woken == 1);
  CHECK(scripts.ServeWhileBusyOn(here, [&] { ++served; }));
  CHECK(served == 1);
  std::thread::id other;
  std::thread([&] { other = std::this_thread::get_id(); }).join();
  CHECK_FALSE(scripts.ServeWhileBusyOn(other, [&] { ++served; }));
  CHECK(served == 1);

  scripts.Remove(&script);
  CHECK_FALSE(scripts.ServeWhileBusyOn(here, [&] { ++served; }));
  CHECK(served == 1);
  CHECK(woken == 1);
}

TEST_CASE("A busy script's Remove waits for a serving pass in progress") {
  RunningScripts scripts;
  RunningScript script;
  script.thread = std::this_thread::get_id();
  scripts.Add(&script);

  std::promise<void> in_pass;
  std::promise<void> finish_pass;
  std::atomic<bool> pass_done{false};
  std::thread server([&] {
    scripts.ServeWhileBusyOn(script.thread, [&] {
      in_pass.set_value();
      finish_pass.get_future().wait();
      pass_done = true;
    });
  });
  in_pass.get_future().wait();
  std::atomic<bool> removed{false};
  std::thread ender([&] {
    scripts.Remove(&script);
    removed = true;
    // Removed only after the pass: its connections are the script's thread's again.
    CHECK(pass_done.load());
  });
  // Not a timing bound: Remove must still be waiting however long this takes.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK_FALSE(removed.load());
  finish_pass.set_value();
  ender.join();
  server.join();
  CHECK(removed.load());
  CHECK(scripts.empty());
}

}  // namespace sluice::server::testing
