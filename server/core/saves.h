// SAVE and BGSAVE's shared state: whether a save runs, how the last one went, where its
// checkpoint is, and the background save's thread (joined before the store closes:
// WaitForBackground, called by main). Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace sluice::server {

class Saves {
 public:
  struct Info {
    bool in_progress = false;
    bool last_ok = true;            // rdb_last_bgsave_status
    int64_t last_save_unix = 0;     // LASTSAVE (0: none yet; the server's start then)
    int64_t last_duration_ms = -1;  // of the last save; -1: none yet
    std::string last_checkpoint;    // the directory of the last successful save
  };

  ~Saves() { WaitForBackground(); }

  // Claims the one save slot; false when a save is running.
  bool Begin() {
    std::lock_guard<std::mutex> lock(mu_);
    if (info_.in_progress) return false;
    info_.in_progress = true;
    return true;
  }
  void End(bool ok, int64_t unix_s, int64_t duration_ms, const std::string& checkpoint) {
    std::lock_guard<std::mutex> lock(mu_);
    info_.in_progress = false;
    info_.last_ok = ok;
    info_.last_duration_ms = duration_ms;
    if (ok) {
      info_.last_save_unix = unix_s;
      info_.last_checkpoint = checkpoint;
    }
  }
  Info info() const {
    std::lock_guard<std::mutex> lock(mu_);
    return info_;
  }
  // Runs `work` on the background thread (after joining the previous one). Call after Begin.
  template <typename F>
  void StartBackground(F work) {
    std::lock_guard<std::mutex> lock(thread_mu_);
    if (thread_.joinable()) thread_.join();
    thread_ = std::thread(std::move(work));
  }
  void WaitForBackground() {
    std::lock_guard<std::mutex> lock(thread_mu_);
    if (thread_.joinable()) thread_.join();
  }

 private:
  mutable std::mutex mu_;
  Info info_;
  std::mutex thread_mu_;
  std::thread thread_;
};

}  // namespace sluice::server
