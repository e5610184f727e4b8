// Redis's stream-node-max-bytes and stream-node-max-entries: where XADD starts a new node of a
// stream (so `~` trims remove what Redis removes under the same settings). Process-wide, as
// Redis's server.stream_node_max_*; the server sets them from its configuration (CONFIG SET, the
// config file). Thread-safe (relaxed atomics); a change applies to the nodes started after it.
#pragma once

#include <cstdint>

namespace sluice {

// max_bytes: a new node when the tail node's listpack would reach it (0, or above 1 GB: 1 GB);
// max_entries: a new node when the tail holds that many entries, live and deleted (0: no limit).
void SetStreamNodeLimits(int64_t max_bytes, int64_t max_entries);

}  // namespace sluice
