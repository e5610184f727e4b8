#include "server/core/monitors.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <mutex>

#include "server/core/args.h"
#include "server/core/redaction.h"

namespace sluice::server {

namespace {

// Redis's sdscatrepr: a double-quoted string with \\ \" \n \r \t \a \b escaped, other
// unprintable bytes as \xNN.
void AppendQuoted(std::string* out, std::string_view s) {
  out->push_back('"');
  for (char c : s) {
    switch (c) {
      case '\\':
      case '"':
        out->push_back('\\');
        out->push_back(c);
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      case '\a':
        out->append("\\a");
        break;
      case '\b':
        out->append("\\b");
        break;
      default:
        if (std::isprint(static_cast<unsigned char>(c))) {
          out->push_back(c);
        } else {
          char hex[8];
          std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(c));
          out->append(hex);
        }
    }
  }
  out->push_back('"');
}

int64_t WallNowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::string MonitorLine(int64_t now_us, int db, std::string_view origin, Args args) {
  char head[64];
  std::snprintf(head, sizeof head, "+%lld.%06lld [%d ", static_cast<long long>(now_us / 1000000),
                static_cast<long long>(now_us % 1000000), db);
  std::string line(head);
  line.append(origin);
  line.append("] ");
  for (size_t i = 0; i < args.size(); ++i) {
    if (i > 0) line.push_back(' ');
    AppendQuoted(&line, RedactedArgument(args, i) ? std::string_view("(redacted)") : args[i]);
  }
  line.append("\r\n");
  return line;
}

bool MonitorRegistry::Add(ClientState* client) {
  std::unique_lock lock(mu_);
  if (std::find(monitors_.begin(), monitors_.end(), client) != monitors_.end()) return false;
  monitors_.push_back(client);
  count_.store(monitors_.size(), std::memory_order_relaxed);
  client->monitoring.store(true, std::memory_order_relaxed);
  return true;
}

void MonitorRegistry::Remove(ClientState* client) {
  if (!client->monitoring.load(std::memory_order_relaxed)) return;
  std::unique_lock lock(mu_);
  auto it = std::find(monitors_.begin(), monitors_.end(), client);
  if (it != monitors_.end()) monitors_.erase(it);
  count_.store(monitors_.size(), std::memory_order_relaxed);
  client->monitoring.store(false, std::memory_order_relaxed);
}

void MonitorRegistry::Feed(const ClientState& client, bool from_script, int db, Args args,
                           const OutputBufferLimit& limit) {
  const std::string line =
      MonitorLine(WallNowUs(), db, from_script ? std::string_view("lua") : client.addr, args);
  std::shared_lock lock(mu_);
  for (ClientState* monitor : monitors_) monitor->outbox.PushEncoded(line, limit);
}

}  // namespace sluice::server
