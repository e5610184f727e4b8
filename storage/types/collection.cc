#include "collection.h"

#include <algorithm>
#include <utility>

#include "inline_elements.h"
#include "scratch.h"
#include "sluice/glob.h"
#include "store_impl.h"
#include "txn.h"

namespace sluice::internal {

const char* CollectionEncodingName(ValueKind kind, const CollectionMeta& meta) {
  const bool big = (meta.flags & kMetaBigEncoding) != 0;
  switch (kind) {
    case ValueKind::kHash:
      return big ? "hashtable" : "listpack";
    case ValueKind::kList:
      return "quicklist";
    case ValueKind::kSet:
      return big ? "hashtable" : "intset";
    case ValueKind::kZSet:
      return big ? "skiplist" : "listpack";
    case ValueKind::kStream:
      return "stream";
    default:
      return "raw";
  }
}

Collection::Collection(Txn& txn, int db, std::string_view user_key, ValueKind kind)
    : txn_(&txn), db_(db), user_key_(user_key), raw_key_(EncodeKey(db, user_key)), kind_(kind) {}

Result<Collection> Collection::Open(Txn& txn, int db, std::string_view user_key, ValueKind kind,
                                    bool write) {
  Collection c(txn, db, user_key, kind);
  Status claim = write ? txn.ClaimWrite(c.raw_key_) : txn.ClaimRead(c.raw_key_);
  if (!claim.ok()) return claim;
  auto v = txn.ReadView(c.raw_key_);
  if (!v.ok()) return v.status();
  if (!v->has_value()) return c;
  if ((*v)->kind != kind) return Status::WrongType();
  auto meta = DecodeMeta((*v)->payload);
  if (!meta || meta->version == 0) return Status::Corruption("invalid collection metadata");
  c.meta_ = std::move(*meta);
  c.expire_at_ms_ = (*v)->expire_at_ms;
  c.SetPrefix();
  return c;
}

Collection Collection::NewAt(Txn& txn, int db, std::string_view user_key, ValueKind kind) {
  Collection c(txn, db, user_key, kind);
  c.Reset();
  return c;
}

void Collection::SetPrefix() { EncodeSubKeyPrefix(db_, user_key_, meta_.version, prefix_.get()); }

void Collection::Create() {
  if (exists()) return;
  Reset();
  StartInline();
}

namespace {
// The inline limits of a kind (0 members: never inline), and whether Redis's conversion to its
// big encoding ends the inline layout too (a sorted set's does: its one-page ZSCAN and its -0
// rule follow the encoding; a set's does not: any non-integer member makes it a hashtable).
struct InlineLimits {
  int64_t members = 0;
  size_t bytes = 0;
  bool ends_with_big_encoding = false;
};
InlineLimits InlineLimitsOf(ValueKind kind, const Options& o) {
  switch (kind) {
    case ValueKind::kZSet:
      return {o.zset_inline_max_members, o.zset_inline_max_bytes, true};
    case ValueKind::kSet:
      return {o.set_inline_max_members, o.set_inline_max_bytes, false};
    default:
      return {};
  }
}
}  // namespace

void Collection::StartInline() {
  if (meta_.count != 0 || InlineLimitsOf(kind_, txn_->impl().options()).members <= 0) return;
  meta_.flags |= kMetaInlineElements;
  meta_.extra.clear();
}

void Collection::SettleInline() {
  if (!is_inline()) return;
  const InlineLimits limits = InlineLimitsOf(kind_, txn_->impl().options());
  const bool converted = limits.ends_with_big_encoding && (meta_.flags & kMetaBigEncoding) != 0;
  if (!converted && meta_.count <= limits.members && meta_.extra.size() <= limits.bytes) return;
  // Under this version nothing was ever written to the column families: the elements go there
  // as they are, and the metadata's extra is the type's own again.
  std::string elements = std::move(meta_.extra);
  meta_.extra.clear();
  meta_.flags &= static_cast<uint8_t>(~kMetaInlineElements);
  InlineElements(elements).ForEach([this](ElementCf cf, std::string_view element,
                                          std::string_view value) { Put(cf, element, value); });
}

void Collection::Reset() {
  meta_ = CollectionMeta{};
  meta_.version = txn_->impl().NewCollectionVersion();
  expire_at_ms_ = kNoExpiry;
  SetPrefix();
}

void Collection::Renew() {
  meta_.version = txn_->impl().NewCollectionVersion();
  SetPrefix();
}

std::string Collection::SubKey(std::string_view element) const {
  std::string k;
  k.reserve(prefix_->size() + element.size());
  k.append(*prefix_);
  k.append(element);
  return k;
}

Status Collection::Get(ElementCf cf, std::string_view element, std::string* value, bool* found) {
  if (is_inline()) {
    const std::optional<std::string_view> v = InlineElements(meta_.extra).Find(cf, element);
    *found = v.has_value();
    if (v) value->assign(*v);
    return Status::Ok();
  }
  scratch_->assign(*prefix_);
  scratch_->append(element);
  return txn_->GetRaw(txn_->impl().element_cf(cf), *scratch_, value, found, raw_key_);
}

Status Collection::GetInRun(ElementCf cf, std::string_view element, std::string_view lower,
                            std::string_view upper, bool descending, std::string* value,
                            bool* found) {
  if (is_inline()) return Get(cf, element, value, found);
  scratch_->assign(*prefix_);
  scratch_->append(element);
  const Txn::KeyRun run{*prefix_, lower, upper, descending};
  return txn_->GetRawInRun(txn_->impl().element_cf(cf), *scratch_, run, value, found, raw_key_);
}

void Collection::Put(ElementCf cf, std::string_view element, std::string_view value) {
  if (is_inline()) {
    InlineElements(meta_.extra).Put(cf, element, value);
    // Out as soon as it no longer fits: a big write (ZUNIONSTORE's) never grows the buffer
    // past the limits.
    return SettleInline();
  }
  scratch_->assign(*prefix_);
  scratch_->append(element);
  txn_->PutRaw(txn_->impl().element_cf(cf), *scratch_, value);
}

void Collection::PutRewritable(ElementCf cf, std::string_view element, std::string_view value) {
  if (is_inline()) return Put(cf, element, value);
  scratch_->assign(*prefix_);
  scratch_->append(element);
  txn_->PutRawRewritable(txn_->impl().element_cf(cf), *scratch_, value);
}

void Collection::Erase(ElementCf cf, std::string_view element) {
  EraseElement(cf, element, /*once=*/false);
}

void Collection::EraseOnce(ElementCf cf, std::string_view element) {
  EraseElement(cf, element, /*once=*/true);
}

void Collection::EraseElement(ElementCf cf, std::string_view element, bool once) {
  if (is_inline()) return InlineElements(meta_.extra).Erase(cf, element);
  scratch_->assign(*prefix_);
  scratch_->append(element);
  if (once) {
    txn_->EraseOnceRaw(txn_->impl().element_cf(cf), *scratch_);
  } else {
    txn_->DeleteRaw(txn_->impl().element_cf(cf), *scratch_);
  }
}

std::unique_ptr<rocksdb::Iterator> Collection::NewIterator(ElementCf cf) {
  if (is_inline()) return InlineElements(meta_.extra).NewIterator(*prefix_, cf, "");
  if (cf == ElementCf::kZScore) {
    // Past the element "", a sorted set's head record (zset_head.cc): every score element has
    // at least its 8 score bytes.
    scratch_->assign(*prefix_);
    scratch_->push_back('\0');
    return txn_->NewIterator(txn_->impl().element_cf(cf), *scratch_, PrefixEnd(*prefix_));
  }
  return txn_->NewIterator(txn_->impl().element_cf(cf), *prefix_, PrefixEnd(*prefix_));
}

std::unique_ptr<rocksdb::Iterator> Collection::NewIterator(ElementCf cf,
                                                           std::string_view element_prefix) {
  if (is_inline()) return InlineElements(meta_.extra).NewIterator(*prefix_, cf, element_prefix);
  std::string lower = SubKey(element_prefix);
  const std::string upper = PrefixEnd(lower);
  return txn_->NewIterator(txn_->impl().element_cf(cf), lower, upper);
}

void Collection::Save() {
  SettleInline();
  if (meta_.count <= 0) {
    txn_->Delete(raw_key_);
    return;
  }
  Borrowed<std::string> payload;  // Txn::Put copies it into the unit's batch
  EncodeMetaTo(meta_, payload.get());
  txn_->Put(raw_key_, kind_, expire_at_ms_, *payload);
}

void Collection::Touch() { txn_->Touch(raw_key_); }

Status CopyElements(Collection& src, Collection& dst) {
  if (src.is_inline()) return Status::Ok();  // its metadata, copied by the caller, holds them
  const uint32_t cfs = ElementCfsOf(src.kind());
  for (int i = 0; i < kNumElementCfs; ++i) {
    if ((cfs & (1u << i)) == 0) continue;
    const auto cf = static_cast<ElementCf>(i);
    // Collected first: writes through the Txn while iterating are not followed by the view.
    std::vector<std::pair<std::string, std::string>> items;
    auto it = src.NewIterator(cf);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      items.emplace_back(std::string(src.ElementOf(it->key())), it->value().ToString());
    }
    if (!it->status().ok()) return FromRocks(it->status());
    it.reset();
    for (const auto& [element, value] : items) dst.Put(cf, element, value);
  }
  return Status::Ok();
}

Result<ElementScanPage> ScanElements(Collection& c, ElementCf cf, uint64_t cursor,
                                     std::optional<std::string_view> match, int64_t count) {
  ElementScanPage page;
  if (!c.exists()) return page;
  const std::string owner = c.raw_key() + c.SubKey("");
  CursorTable& cursors = c.txn().impl().cursors();
  std::optional<CursorTable::Position> pos;
  if (cursor != 0) pos = cursors.Find(cursor);
  auto it = c.NewIterator(cf);
  if (pos && pos->owner == owner) {
    const std::string after = c.SubKey(pos->last_key);
    it->Seek(after);
    if (it->Valid() && it->key() == after) it->Next();
  } else {
    it->SeekToFirst();
  }
  std::string last;
  for (int64_t n = 0; it->Valid() && n < std::max<int64_t>(count, 1); ++n, it->Next()) {
    const std::string_view element = c.ElementOf(it->key());
    last.assign(element);
    if (!match || *match == "*" || GlobMatch(*match, element)) {
      page.items.emplace_back(std::string(element), it->value().ToString());
    }
  }
  if (!it->status().ok()) return FromRocks(it->status());
  if (it->Valid()) page.next_cursor = cursors.Add({c.db(), std::move(last), owner});
  return page;
}

Result<std::pair<std::string, std::string>> SeekRandomElement(Collection& c, ElementCf cf) {
  auto it = c.NewIterator(cf);
  it->SeekToLast();
  if (!it->Valid()) return it->status().ok() ? Status::NoSuchKey() : FromRocks(it->status());
  const std::string last(c.ElementOf(it->key()));
  it->SeekToFirst();
  if (!it->Valid()) return it->status().ok() ? Status::NoSuchKey() : FromRocks(it->status());
  const std::string first(c.ElementOf(it->key()));
  size_t n = 0;
  while (n < first.size() && n < last.size() && first[n] == last[n]) ++n;
  std::string target = first.substr(0, n);
  if (n < last.size()) {
    const unsigned lo = n < first.size() ? static_cast<unsigned char>(first[n]) : 0u;
    const unsigned hi = static_cast<unsigned char>(last[n]);
    target.push_back(static_cast<char>(lo + RandomU64() % (hi - lo + 1)));
    const uint64_t tail = RandomU64();
    target.append(reinterpret_cast<const char*>(&tail), sizeof(tail));
  }
  it->Seek(c.SubKey(target));
  if (!it->Valid()) it->SeekToFirst();  // past the last element: wrap around
  if (!it->Valid()) return it->status().ok() ? Status::NoSuchKey() : FromRocks(it->status());
  return std::make_pair(std::string(c.ElementOf(it->key())), it->value().ToString());
}

Status CopyCollection(Txn& txn, ValueKind kind, int src_db, std::string_view src, int dst_db,
                      std::string_view dst) {
  auto from = Collection::Open(txn, src_db, src, kind, /*write=*/false);
  if (!from.ok()) return from.status();
  if (!from->exists()) return Status::NoSuchKey();
  Collection to = Collection::NewAt(txn, dst_db, dst, kind);
  if (Status s = CopyElements(*from, to); !s.ok()) return s;
  const uint64_t version = to.meta().version;
  to.meta() = from->meta();
  to.meta().version = version;
  to.set_expire_at_ms(from->expire_at_ms());
  to.Save();
  return Status::Ok();
}

}  // namespace sluice::internal
