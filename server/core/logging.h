// Server log lines on stderr: "<pid>:M 22 Nov 2026 13:40:00.123 * message" (Redis's layout;
// '*' info, '#' error). Thread-safe: whole lines are written under a lock.
#pragma once

#include <string_view>

namespace sluice::server {

void LogInfo(std::string_view message);
void LogError(std::string_view message);

}  // namespace sluice::server
