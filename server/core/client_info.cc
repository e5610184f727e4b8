#include "server/core/client_info.h"

#include <string_view>

namespace sluice::server {

std::string ClientInfoLine(const ClientState& c, int64_t now_ms) {
  std::string line;
  line.reserve(256);
  auto field = [&](const char* name, std::string_view value) {
    if (!line.empty()) line += ' ';
    line += name;
    line += '=';
    line += value;
  };
  auto num = [&](const char* name, int64_t value) { field(name, std::to_string(value)); };
  num("id", static_cast<int64_t>(c.id));
  field("addr", c.addr);
  field("laddr", c.laddr);
  num("fd", c.fd);
  field("name", c.name);
  num("age", (now_ms - c.created_ms) / 1000);
  num("idle", (now_ms - c.last_interaction_ms.load(std::memory_order_relaxed)) / 1000);
  field("flags", c.blocked.load(std::memory_order_relaxed) ? "b" : "N");
  num("db", c.db);
  for (const char* zero : {"sub", "psub", "ssub"}) num(zero, 0);
  num("multi", -1);
  for (const char* zero : {"qbuf", "qbuf-free", "argv-mem", "multi-mem", "rbs", "rbp", "obl", "oll",
                           "omem", "tot-mem"}) {
    num(zero, 0);
  }
  field("events", "r");
  const std::string* cmd = c.last_command.load(std::memory_order_relaxed);
  field("cmd", cmd == nullptr ? "NULL" : *cmd);
  field("user", c.user_name);
  num("redir", -1);
  num("resp", c.resp);
  field("lib-name", c.lib_name);
  field("lib-ver", c.lib_ver);
  line += '\n';
  return line;
}

}  // namespace sluice::server
