// A hint for the collection commands of a pipelined batch: warms the CPU caches for the
// elements they are about to look up, so that the lookups' cache misses overlap. Part of the
// public API of sluice::Store (store.h); changes nothing.
#pragma once

#include <span>
#include <string_view>

#include "sluice/store.h"

namespace sluice {

// One element (a hash field, a set or sorted-set member) of the collection at `key`.
struct ElementRef {
  std::string_view key;
  std::string_view element;
};

// Store::PrefetchKeys for elements: for each run of at least two consecutive items naming the
// same key (a hot collection; a lone item is left alone, since finding its elements costs a
// metadata read), reads the key's metadata once and warms the newest memtable of its element
// column family for the run's elements (three rounds: buckets, nodes, newest versions). At most
// Store::kPrefetchKeys elements a run; lists and streams are skipped. Thread-safe.
void PrefetchElements(Store& store, int db, std::span<const ElementRef> items);

}  // namespace sluice
