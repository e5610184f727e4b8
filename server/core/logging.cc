#include "server/core/logging.h"

#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <mutex>
#include <string>

namespace sluice::server {

namespace {

std::mutex log_mu;

void Log(char level, std::string_view message) {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  tm local{};
  localtime_r(&ts.tv_sec, &local);
  char stamp[64];
  size_t n = strftime(stamp, sizeof(stamp), "%d %b %Y %H:%M:%S", &local);
  snprintf(stamp + n, sizeof(stamp) - n, ".%03ld", ts.tv_nsec / 1000000);
  std::string line = std::to_string(getpid()) + ":M " + stamp + " " + level + " ";
  line += message;
  line += '\n';
  std::lock_guard lock(log_mu);
  fwrite(line.data(), 1, line.size(), stderr);
  fflush(stderr);
}

}  // namespace

void LogInfo(std::string_view message) { Log('*', message); }
void LogError(std::string_view message) { Log('#', message); }

}  // namespace sluice::server
