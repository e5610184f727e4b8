// The dataset load in progress, Redis's `server.loading`: while a replica loads its primary's
// full-sync RDB, commands without the `loading` flag are answered -LOADING (the dispatcher's
// gate) and INFO persistence shows `loading:1` and the load's progress. `key-load-delay` slows
// each loaded key as Redis's does (tests make a load last long enough to watch it).
//
// Thread-safety: every function may be called from any thread. One load at a time (the
// replica link's); Begin/End bracket it.
#pragma once

#include <cstdint>

#include "sluice/status.h"

namespace sluice::server {

struct LoadingProgress {
  bool loading = false;
  int64_t start_unix_s = 0;
  int64_t total_bytes = 0;
  int64_t loaded_bytes = 0;
};

void BeginLoading(int64_t total_bytes);
void NoteLoadedBytes(int64_t loaded_bytes);
void EndLoading();
// One relaxed load: the dispatcher asks on every command.
bool Loading();
LoadingProgress GetLoadingProgress();

// Redis's debugDelay for key-load-delay (microseconds per key): a positive value sleeps that
// long; a negative one sleeps 1 us once in every -value keys on average; 0 nothing.
void KeyLoadDelay(int64_t us);

// -LOADING Redis is loading the dataset in memory (errors_replication.cc).
Status LoadingDataset();

}  // namespace sluice::server
