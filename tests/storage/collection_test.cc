// The collection layout: metadata and sub-key codecs, the Collection helper on a unit, O(1)
// deletion with stale elements dropped by compaction, RENAME/COPY of collections, the key
// commands on every type, and the data dir's format version (refusal and migration).
#include "storage/types/collection.h"

#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <set>

#include "sluice/transaction.h"
#include "storage/engine/txn.h"
#include "test_util.h"

namespace sluice::testing {

using internal::Collection;
using internal::CollectionMeta;
using internal::ElementCf;

namespace {

// Makes a collection of `kind` at key with the given elements (value = "v:" + element), in a
// unit of its own.
void MakeCollection(Store& store, std::string_view key, ValueKind kind,
                    std::initializer_list<std::string_view> elements, int db = 0) {
  const KeyRef keys[] = {{db, key}};
  Store::Transaction t(store, keys);
  auto c = Collection::Open(t.txn(), db, key, kind, /*write=*/true);
  REQUIRE(c.ok());
  c->Create();
  for (auto e : elements) {
    c->Put(ElementCf::kHash, e, "v:" + std::string(e));
    c->meta().count += 1;
  }
  c->Save();
  REQUIRE(t.Commit().ok());
}

// The elements (element -> value) of the hash at key, read through the layout.
std::map<std::string, std::string> Elements(Store& store, std::string_view key, int db = 0) {
  Store::Transaction t(store, {});
  auto c = Collection::Open(t.txn(), db, key, ValueKind::kHash, /*write=*/false);
  REQUIRE(c.ok());
  std::map<std::string, std::string> out;
  if (!c->exists()) return out;
  auto it = c->NewIterator(ElementCf::kHash);
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    out.emplace(std::string(c->ElementOf(it->key())), it->value().ToString());
  }
  return out;
}

}  // namespace

TEST_CASE("metadata and sub-keys round-trip") {
  CollectionMeta m{.version = 0x0102030405060708, .count = 42, .flags = 1, .extra = "xy"};
  auto back = internal::DecodeMeta(internal::EncodeMeta(m));
  REQUIRE(back.has_value());
  CHECK(back->version == m.version);
  CHECK(back->count == 42);
  CHECK(back->flags == 1);
  CHECK(back->extra == "xy");
  CHECK_FALSE(internal::DecodeMeta("short").has_value());

  std::string prefix;
  internal::EncodeSubKeyPrefix(5, std::string_view("k\0y", 3), 7, &prefix);
  CHECK(prefix.size() == 3 + 4 + 3 + 8);
  std::string meta_key;
  uint64_t version = 0;
  std::string_view element;
  const std::string sub_key = prefix + "field";  // element views into it
  REQUIRE(internal::DecodeSubKey(sub_key, &meta_key, &version, &element));
  CHECK(meta_key == internal::EncodeKey(5, std::string_view("k\0y", 3)));
  CHECK(version == 7);
  CHECK(element == "field");
  CHECK_FALSE(internal::DecodeSubKey(prefix.substr(0, 9), &meta_key, &version, &element));
  // A key that is a prefix of another never shares its elements' range.
  std::string other;
  internal::EncodeSubKeyPrefix(5, "k", 7, &other);
  CHECK(std::string_view(prefix).substr(0, other.size()) != other);
  CHECK(internal::PrefixEnd("a\xff\xff") == "b");
  CHECK(internal::PrefixEnd("\xff") == "");
}

TEST_CASE("a collection's elements are read through its metadata, in element order") {
  Fixture f;
  MakeCollection(*f.store, "h", ValueKind::kHash, {"b", "a", "c"});
  CHECK(Elements(*f.store, "h") ==
        std::map<std::string, std::string>{{"a", "v:a"}, {"b", "v:b"}, {"c", "v:c"}});
  CHECK(**f.store->Type(0, "h") == ValueKind::kHash);
  CHECK(*f.store->Exists(0, std::vector<std::string_view>{"h"}) == 1);
  // Another kind at the key: the collection API says WRONGTYPE, strings too.
  {
    Store::Transaction t(*f.store, {});
    CHECK(Collection::Open(t.txn(), 0, "h", ValueKind::kSet, false).status().code() ==
          Code::kWrongType);
  }
  CHECK(f.store->Get(0, "h").status().code() == Code::kWrongType);
  CHECK(f.store->IncrBy(0, "h", 1).status().code() == Code::kWrongType);
}

TEST_CASE("a unit reads its own element writes") {
  Fixture f;
  const KeyRef keys[] = {{0, "h"}};
  Store::Transaction t(*f.store, keys);
  auto c = Collection::Open(t.txn(), 0, "h", ValueKind::kHash, true);
  REQUIRE(c.ok());
  c->Create();
  c->Put(ElementCf::kHash, "f", "1");
  std::string v;
  bool found = false;
  REQUIRE(c->Get(ElementCf::kHash, "f", &v, &found).ok());
  CHECK(found);
  CHECK(v == "1");
  c->Erase(ElementCf::kHash, "f");
  REQUIRE(c->Get(ElementCf::kHash, "f", &v, &found).ok());
  CHECK_FALSE(found);
}

TEST_CASE("DEL is one metadata delete; a new collection at the key never sees old elements") {
  Fixture f;
  MakeCollection(*f.store, "h", ValueKind::kHash, {"a", "b"});
  std::vector<std::string_view> k{"h"};
  CHECK(*f.store->Del(0, k) == 1);
  CHECK_FALSE(f.store->Type(0, "h")->has_value());
  MakeCollection(*f.store, "h", ValueKind::kHash, {"c"});
  CHECK(Elements(*f.store, "h") == std::map<std::string, std::string>{{"c", "v:c"}});
}

TEST_CASE("compaction drops the elements of deleted, expired and overwritten collections") {
  Fixture f;
  MakeCollection(*f.store, "gone", ValueKind::kHash, {"a", "b"});
  MakeCollection(*f.store, "expiring", ValueKind::kHash, {"a"});
  MakeCollection(*f.store, "over", ValueKind::kHash, {"a", "b", "c"});
  MakeCollection(*f.store, "kept", ValueKind::kHash, {"a", "b"});
  std::vector<std::string_view> k{"gone"};
  REQUIRE(*f.store->Del(0, k) == 1);
  REQUIRE(*f.store->ExpireAt(0, "expiring", kT0Ms + 10, ExpireCondition::kAlways));
  REQUIRE(f.store->Set(0, "over", "now a string", SetPlain())->written);
  f.AdvanceMs(11);
  Store::Impl& impl = f.store->impl();
  auto* cf = impl.element_cf(ElementCf::kHash);
  auto count = [&] {
    std::unique_ptr<rocksdb::Iterator> it(impl.db()->NewIterator(rocksdb::ReadOptions(), cf));
    int64_t n = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
    return n;
  };
  CHECK(count() == 8);
  REQUIRE(impl.db()->Flush(rocksdb::FlushOptions(), cf).ok());
  REQUIRE(impl.db()->CompactRange(rocksdb::CompactRangeOptions(), cf, nullptr, nullptr).ok());
  CHECK(count() == 2);
  CHECK(Elements(*f.store, "kept") ==
        std::map<std::string, std::string>{{"a", "v:a"}, {"b", "v:b"}});
}

TEST_CASE("RENAME and COPY carry a collection's elements and TTL") {
  Fixture f;
  MakeCollection(*f.store, "src", ValueKind::kHash, {"a", "b"});
  REQUIRE(*f.store->ExpireAt(0, "src", kT0Ms + 5000, ExpireCondition::kAlways));
  MakeCollection(*f.store, "dst", ValueKind::kHash, {"old"});
  REQUIRE(*f.store->Rename(0, "src", "dst", false));
  CHECK_FALSE(f.store->Type(0, "src")->has_value());
  CHECK(Elements(*f.store, "dst") ==
        std::map<std::string, std::string>{{"a", "v:a"}, {"b", "v:b"}});
  CHECK(*f.store->PTtl(0, "dst") == 5000);
  REQUIRE(*f.store->Copy(0, "dst", 3, "copy", false));
  CHECK(Elements(*f.store, "copy", 3) ==
        std::map<std::string, std::string>{{"a", "v:a"}, {"b", "v:b"}});
  // The copy is independent: deleting the source leaves it whole.
  std::vector<std::string_view> k{"dst"};
  REQUIRE(*f.store->Del(0, k) == 1);
  CHECK(Elements(*f.store, "copy", 3).size() == 2);
  CHECK(**f.store->ObjectEncoding(3, "copy") == "listpack");
}

TEST_CASE("key walks list collections with their type; FLUSHDB drops their elements") {
  Fixture f;
  MakeCollection(*f.store, "h", ValueKind::kHash, {"a"});
  REQUIRE(f.store->Set(0, "s", "x", SetPlain())->written);
  auto page = f.store->Scan(0, 0, std::nullopt, 100, std::string_view("hash"));
  REQUIRE(page.ok());
  CHECK(page->keys == std::vector<std::string>{"h"});
  CHECK(*f.store->DbSize(0) == 2);
  auto keys = f.store->Keys(0, "*");
  CHECK(std::set<std::string>(keys->begin(), keys->end()) == std::set<std::string>{"h", "s"});
  REQUIRE(f.store->FlushDb(0).ok());
  CHECK(*f.store->DbSize(0) == 0);
  Store::Impl& impl = f.store->impl();
  std::unique_ptr<rocksdb::Iterator> it(
      impl.db()->NewIterator(rocksdb::ReadOptions(), impl.element_cf(ElementCf::kHash)));
  it->SeekToFirst();
  CHECK_FALSE(it->Valid());
}

TEST_CASE("collection versions are fresh across reopen") {
  Fixture f;
  uint64_t before = f.store->impl().NewCollectionVersion();
  f.Reopen();
  CHECK(f.store->impl().NewCollectionVersion() > before);
}

TEST_CASE("the data dir records its format; an unknown format is refused") {
  TempDir dir;
  { auto s = OpenStore(dir.path()); }
  std::ifstream in(dir.sub("SLUICE-FORMAT"));
  std::string line;
  std::getline(in, line);
  CHECK(line == "sluice-format 1");
  {
    std::ofstream out(dir.sub("SLUICE-FORMAT"), std::ios::trunc);
    out << "sluice-format 7\n";
  }
  Options o;
  o.path = dir.path();
  auto r = Store::Open(o);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("on-disk format 7") != std::string::npos);
}

TEST_CASE("a current data dir that lost its format file is not migrated as format 0") {
  TempDir dir;
  {
    auto s = OpenStore(dir.path());
    REQUIRE(s->Set(0, "plain", "v", SetPlain()).ok());
  }
  // A raw copy of the files without SLUICE-FORMAT: the column families say format 1.
  REQUIRE(std::remove(dir.sub("SLUICE-FORMAT").c_str()) == 0);
  {
    auto s = OpenStore(dir.path());
    CHECK(s->Get(0, "plain").value() == std::optional<std::string>("v"));
    CHECK(s->DbSize(0).value() == 1);
  }
  std::ifstream in(dir.sub("SLUICE-FORMAT"));
  std::string line;
  std::getline(in, line);
  CHECK(line == "sluice-format 1");  // written back
}

TEST_CASE("a format-0 data dir (keys without a slot) is migrated on open") {
  TempDir dir;
  auto clock = ManualClock();
  {
    Options o;
    o.path = dir.path();
    rocksdb::DB* db = nullptr;
    REQUIRE(rocksdb::DB::Open(internal::MakeRocksOptions(o, clock), dir.path(), &db).ok());
    for (int i = 0; i < 2500; ++i) {
      const std::string key = std::string(1, char(i % 3)) + "k" + std::to_string(i);
      REQUIRE(
          db->Put(rocksdb::WriteOptions(), key,
                  internal::EncodeValue(ValueKind::kString, internal::kNoExpiry, std::to_string(i)))
              .ok());
    }
    delete db;
  }
  auto store = OpenStore(dir.path(), clock);
  CHECK(*store->Get(0, "k0") == "0");
  CHECK(*store->Get(1, "k1") == "1");
  CHECK(*store->Get(2, "k2498") == "2498");
  CHECK(*store->DbSize(0) + *store->DbSize(1) + *store->DbSize(2) == 2500);
  store.reset();
  std::ifstream in(dir.sub("SLUICE-FORMAT"));
  std::string line;
  std::getline(in, line);
  CHECK(line == "sluice-format 1");
}

}  // namespace sluice::testing
