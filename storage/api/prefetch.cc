#include "sluice/prefetch.h"

#include <rocksdb/slice.h>

#include <algorithm>
#include <string>

#include "collection_layout.h"
#include "encoding.h"
#include "store_impl.h"

namespace sluice {

namespace {

// The element column family a key of this kind looks its elements up in (a sorted set's members
// in kZSet); false for kinds without point-looked-up elements.
bool LookupCfOf(ValueKind kind, internal::ElementCf* cf) {
  switch (kind) {
    case ValueKind::kHash:
      *cf = internal::ElementCf::kHash;
      return true;
    case ValueKind::kSet:
      *cf = internal::ElementCf::kSet;
      return true;
    case ValueKind::kZSet:
      *cf = internal::ElementCf::kZSet;
      return true;
    default:
      return false;
  }
}

}  // namespace

void PrefetchElements(Store& store, int db, std::span<const ElementRef> items) {
  constexpr size_t kMax = internal::NewestMemTable::kMaxKeys;
  // Reused per thread: no allocation once warm.
  thread_local std::string raw_key;
  thread_local std::string prefix;
  thread_local std::string sub_keys[kMax];
  thread_local rocksdb::PinnableSlice meta;
  Store::Impl& impl = store.impl();
  size_t i = 0;
  while (i < items.size()) {
    size_t end = i + 1;
    while (end < items.size() && items[end].key == items[i].key) ++end;
    const size_t n = std::min(end - i, kMax);
    const size_t first = i;
    i = end;
    if (n < 2) continue;
    internal::EncodeKeyTo(db, items[first].key, &raw_key);
    meta.Reset();
    bool found = false;
    internal::ElementCf cf = internal::ElementCf::kSet;
    uint64_t version = 0;
    if (impl.ReadRaw(raw_key, &meta, &found).ok() && found) {
      const auto value = internal::DecodeValue(meta.ToStringView());
      // The metadata's version: its payload's first 8 bytes (collection_layout.h).
      // An inline collection (the flags byte after version and count) has no element entries.
      if (value && LookupCfOf(value->kind, &cf) && value->payload.size() >= 17 &&
          (static_cast<uint8_t>(value->payload[16]) &
           (internal::kMetaInline | internal::kMetaInlineElements)) == 0) {
        version = internal::DecodeFixed64(value->payload.data());
      }
    }
    meta.Reset();  // no block stays pinned past the call: a thread may outlive the store
    if (version == 0) continue;
    internal::EncodeSubKeyPrefix(db, items[first].key, version, &prefix);
    std::string_view views[kMax];
    for (size_t k = 0; k < n; ++k) {
      sub_keys[k].assign(prefix);
      sub_keys[k].append(items[first + k].element);
      views[k] = sub_keys[k];
    }
    impl.element_memtable(cf).Prefetch(views, n);
  }
}

}  // namespace sluice
