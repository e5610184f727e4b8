#include "server/core/open_files.h"

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace sluice::server {

OpenFilesFit FitOpenFiles(int64_t maxclients) {
  OpenFilesFit fit{maxclients, {}};
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return fit;  // unknown: trust the configuration
  const auto needed = static_cast<rlim_t>(maxclients + kReservedFds);
  if (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur >= needed) return fit;
  const rlim_t original = limit.rlim_cur;
  rlim_t target = limit.rlim_max == RLIM_INFINITY ? needed : std::min(needed, limit.rlim_max);
  std::string error;
  if (target > original) {
    rlimit raised = limit;
    raised.rlim_cur = target;
    if (setrlimit(RLIMIT_NOFILE, &raised) != 0) {
      error = std::strerror(errno);
      target = original;
    }
  }
  if (target >= needed) {
    fit.message = "raised the open files limit from " + std::to_string(original) + " to " +
                  std::to_string(target) + " (maxclients " + std::to_string(maxclients) + " + " +
                  std::to_string(kReservedFds) + " reserved)";
    return fit;
  }
  fit.maxclients = std::max<int64_t>(0, static_cast<int64_t>(target) - kReservedFds);
  fit.message = "maxclients " + std::to_string(maxclients) + " needs " + std::to_string(needed) +
                " open files but the limit is " + std::to_string(target) +
                (error.empty() ? " (ulimit -Hn)" : " (setrlimit failed: " + error + ")") +
                "; maxclients lowered to " + std::to_string(fit.maxclients) +
                ". Raise 'ulimit -n' for more clients.";
  return fit;
}

}  // namespace sluice::server
