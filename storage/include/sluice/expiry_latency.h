// The active expiry's cycle times for an embedder's latency monitor (sluice-server's LATENCY
// `expire-cycle` event, as Redis's activeExpireCycle reports it): a process-wide listener told
// the length of every expiry cycle that did work (an idle cycle, with nothing due, is not
// reported). Kept out of store.h so that it can be attached without rebuilding every includer.
#pragma once

#include <cstdint>
#include <functional>

namespace sluice {

// Called on the store's expiry thread after each working cycle with its length in
// microseconds; must be quick and must not call into the Store. nullptr detaches it.
// Thread-safe.
using ExpiryCycleListener = std::function<void(int64_t micros)>;
void SetExpiryCycleListener(ExpiryCycleListener listener);

}  // namespace sluice
