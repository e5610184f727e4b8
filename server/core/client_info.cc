#include "server/core/client_info.h"

#include <string_view>

#include "server/core/client_buffers.h"
#include "server/core/tracking.h"

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
  std::string flags;
  const int repl = c.repl_kind.load(std::memory_order_relaxed);
  if (repl == ClientState::kReplicaLink) flags += 'S';
  if (repl == ClientState::kMasterLink) flags += 'M';
  if (c.monitoring.load(std::memory_order_relaxed)) flags += 'O';
  if (c.subscribed()) flags += 'P';
  const ClientBuffers* buffers = ClientBuffersOf().Find(&c);
  auto get = [](const std::atomic<int64_t>& v) { return v.load(std::memory_order_relaxed); };
  const int64_t multi = buffers == nullptr ? -1 : get(buffers->multi);
  if (multi >= 0) flags += 'x';
  if (c.blocked.load(std::memory_order_relaxed)) flags += 'b';
  const uint32_t tracking = c.tracking.load(std::memory_order_relaxed);
  if (tracking & kTrackingOn) flags += 't';
  if (tracking & kTrackingBrokenRedir) flags += 'R';
  if (tracking & kTrackingBcast) flags += 'B';
  field("flags", flags.empty() ? "N" : flags);
  num("db", c.db);
  num("sub", c.sub_channels.load(std::memory_order_relaxed));
  num("psub", c.sub_patterns.load(std::memory_order_relaxed));
  num("ssub", c.sub_shard.load(std::memory_order_relaxed));
  num("multi", multi);
  if (buffers == nullptr) {
    for (const char* zero : {"qbuf", "qbuf-free", "argv-mem", "multi-mem", "rbs", "rbp", "obl",
                             "oll", "omem", "tot-mem"}) {
      num(zero, 0);
    }
  } else {
    num("qbuf", get(buffers->qbuf));
    num("qbuf-free", get(buffers->qbuf_free));
    num("argv-mem", get(buffers->argv_mem));
    num("multi-mem", get(buffers->multi_mem));
    num("rbs", get(buffers->rbs));
    num("rbp", get(buffers->rbp));
    num("obl", get(buffers->obl));
    num("oll", get(buffers->oll));
    num("omem", get(buffers->omem));
    num("tot-mem", get(buffers->tot_mem));
  }
  field("events", "r");
  const std::string* cmd = c.last_command.load(std::memory_order_relaxed);
  field("cmd", cmd == nullptr ? "NULL" : *cmd);
  field("user", c.user_name);
  num("redir", (tracking & kTrackingOn)
                   ? static_cast<int64_t>(c.tracking_redirect.load(std::memory_order_relaxed))
                   : -1);
  num("resp", c.resp);
  field("lib-name", c.lib_name);
  field("lib-ver", c.lib_ver);
  line += '\n';
  return line;
}

}  // namespace sluice::server
