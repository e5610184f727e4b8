// String commands: Redis 7 semantics, success and error paths.
#include <doctest/doctest.h>

#include <vector>

#include "test_util.h"

namespace sluice::testing {
namespace {

using SV = std::string_view;

std::optional<std::string> GetOrDie(Store& s, SV key, int db = 0) {
  auto r = s.Get(db, key);
  REQUIRE(r.ok());
  return *r;
}

}  // namespace

TEST_CASE("GET/SET basics and databases are separate") {
  Fixture f;
  CHECK(GetOrDie(*f.store, "k") == std::nullopt);
  auto r = f.store->Set(0, "k", "v", SetPlain());
  REQUIRE(r.ok());
  CHECK(r->written);
  CHECK_FALSE(r->old_value.has_value());
  CHECK(GetOrDie(*f.store, "k") == "v");
  CHECK(GetOrDie(*f.store, "k", 1) == std::nullopt);
  REQUIRE(f.store->Set(15, "k", "other", SetPlain()).ok());
  CHECK(GetOrDie(*f.store, "k", 15) == "other");
  CHECK(GetOrDie(*f.store, "k") == "v");
  REQUIRE(f.store->Set(0, "", std::string("\0bin", 4), SetPlain()).ok());
  CHECK(GetOrDie(*f.store, "") == std::string("\0bin", 4));
}

TEST_CASE("SET NX / XX") {
  Fixture f;
  CHECK_FALSE(f.store->Set(0, "k", "x", SetWith(SetCondition::kIfPresent))->written);
  CHECK(GetOrDie(*f.store, "k") == std::nullopt);
  CHECK(f.store->Set(0, "k", "a", SetWith(SetCondition::kIfAbsent))->written);
  CHECK_FALSE(f.store->Set(0, "k", "b", SetWith(SetCondition::kIfAbsent))->written);
  CHECK(GetOrDie(*f.store, "k") == "a");
  CHECK(f.store->Set(0, "k", "c", SetWith(SetCondition::kIfPresent))->written);
  CHECK(GetOrDie(*f.store, "k") == "c");
}

TEST_CASE("SET NX succeeds on an expired key; XX fails on it") {
  Fixture f;
  REQUIRE(f.store->Set(0, "k", "old", SetAt(kT0Ms + 100)).ok());
  f.AdvanceMs(101);
  CHECK_FALSE(f.store->Set(0, "k", "xx", SetWith(SetCondition::kIfPresent))->written);
  CHECK(f.store->Set(0, "k", "new", SetWith(SetCondition::kIfAbsent))->written);
  CHECK(GetOrDie(*f.store, "k") == "new");
  CHECK(*f.store->PTtl(0, "k") == -1);
}

TEST_CASE("SET GET returns the old value, also when the condition blocks the write") {
  Fixture f;
  SetOptions o;
  o.return_old = true;
  auto r = f.store->Set(0, "k", "1", o);
  CHECK(r->written);
  CHECK_FALSE(r->old_value.has_value());
  r = f.store->Set(0, "k", "2", o);
  CHECK(r->old_value == "1");
  o.condition = SetCondition::kIfAbsent;
  r = f.store->Set(0, "k", "3", o);
  CHECK_FALSE(r->written);
  CHECK(r->old_value == "2");
  CHECK(GetOrDie(*f.store, "k") == "2");
}

TEST_CASE("SET clears the TTL unless KEEPTTL; expiry in the past deletes but reports written") {
  Fixture f;
  REQUIRE(f.store->Set(0, "k", "v", SetAt(kT0Ms + 5000)).ok());
  CHECK(*f.store->PTtl(0, "k") == 5000);
  SetOptions keep;
  keep.expiry = {ExpiryChange::Kind::kKeep, 0};
  REQUIRE(f.store->Set(0, "k", "v2", keep).ok());
  CHECK(*f.store->PTtl(0, "k") == 5000);
  CHECK(GetOrDie(*f.store, "k") == "v2");
  REQUIRE(f.store->Set(0, "k", "v3", SetPlain()).ok());
  CHECK(*f.store->PTtl(0, "k") == -1);

  auto r = f.store->Set(0, "k", "gone", SetAt(kT0Ms));  // at now: already expired
  CHECK(r->written);
  CHECK(GetOrDie(*f.store, "k") == std::nullopt);
  CHECK(*f.store->Exists(0, std::vector<SV>{"k"}) == 0);
  r = f.store->Set(0, "k2", "gone", SetAt(kT0Ms - 1000));
  CHECK(r->written);
  CHECK(*f.store->DbSize(0) == 0);
}

TEST_CASE("GETDEL") {
  Fixture f;
  CHECK(*f.store->GetDel(0, "k") == std::nullopt);
  REQUIRE(f.store->Set(0, "k", "v", SetPlain()).ok());
  CHECK(*f.store->GetDel(0, "k") == "v");
  CHECK(GetOrDie(*f.store, "k") == std::nullopt);
}

TEST_CASE("GETEX: keep, persist, set, set in the past") {
  Fixture f;
  CHECK(*f.store->GetEx(0, "k", {}) == std::nullopt);
  REQUIRE(f.store->Set(0, "k", "v", SetAt(kT0Ms + 1000)).ok());
  CHECK(*f.store->GetEx(0, "k", {ExpiryChange::Kind::kKeep, 0}) == "v");
  CHECK(*f.store->PTtl(0, "k") == 1000);
  CHECK(*f.store->GetEx(0, "k", {ExpiryChange::Kind::kSetAt, kT0Ms + 9000}) == "v");
  CHECK(*f.store->PTtl(0, "k") == 9000);
  CHECK(*f.store->GetEx(0, "k", {ExpiryChange::Kind::kPersist, 0}) == "v");
  CHECK(*f.store->PTtl(0, "k") == -1);
  CHECK(*f.store->GetEx(0, "k", {ExpiryChange::Kind::kSetAt, kT0Ms}) == "v");
  CHECK(GetOrDie(*f.store, "k") == std::nullopt);
}

TEST_CASE("MGET, MSET, MSETNX") {
  Fixture f;
  std::vector<std::pair<SV, SV>> pairs{{"a", "1"}, {"b", "2"}, {"a", "3"}};
  REQUIRE(f.store->MSet(0, pairs).ok());
  std::vector<SV> keys{"a", "b", "missing", "a"};
  auto got = f.store->MGet(0, keys);
  REQUIRE(got.ok());
  CHECK(*got == std::vector<std::optional<std::string>>{"3", "2", std::nullopt, "3"});

  std::vector<std::pair<SV, SV>> nx1{{"c", "x"}, {"a", "y"}};
  CHECK_FALSE(*f.store->MSetNx(0, nx1));
  CHECK(GetOrDie(*f.store, "c") == std::nullopt);
  CHECK(GetOrDie(*f.store, "a") == "3");
  std::vector<std::pair<SV, SV>> nx2{{"c", "x"}, {"d", "y"}};
  CHECK(*f.store->MSetNx(0, nx2));
  CHECK(GetOrDie(*f.store, "d") == "y");
}

TEST_CASE("MSET clears TTLs; MSETNX treats expired keys as absent") {
  Fixture f;
  REQUIRE(f.store->Set(0, "a", "v", SetAt(kT0Ms + 10)).ok());
  std::vector<std::pair<SV, SV>> one{{"a", "w"}};
  REQUIRE(f.store->MSet(0, one).ok());
  CHECK(*f.store->PTtl(0, "a") == -1);
  REQUIRE(f.store->Set(0, "b", "v", SetAt(kT0Ms + 10)).ok());
  f.AdvanceMs(11);
  std::vector<std::pair<SV, SV>> nx{{"b", "new"}, {"c", "new"}};
  CHECK(*f.store->MSetNx(0, nx));
  CHECK(GetOrDie(*f.store, "b") == "new");
}

TEST_CASE("INCRBY: missing key, TTL kept, overflow, stored value rules") {
  Fixture f;
  CHECK(*f.store->IncrBy(0, "n", 5) == 5);
  CHECK(*f.store->IncrBy(0, "n", -7) == -2);
  REQUIRE(f.store->ExpireAt(0, "n", kT0Ms + 3000, ExpireCondition::kAlways).ok());
  CHECK(*f.store->IncrBy(0, "n", 1) == -1);
  CHECK(*f.store->PTtl(0, "n") == 3000);

  REQUIRE(f.store->Set(0, "max", "9223372036854775807", SetPlain()).ok());
  auto r = f.store->IncrBy(0, "max", 1);
  CHECK(r.status().code() == Code::kOverflow);
  CHECK(GetOrDie(*f.store, "max") == "9223372036854775807");
  REQUIRE(f.store->Set(0, "min", "-9223372036854775808", SetPlain()).ok());
  CHECK(f.store->IncrBy(0, "min", -1).status().code() == Code::kOverflow);
  CHECK(*f.store->IncrBy(0, "min", INT64_MAX) == -1);

  for (const char* bad : {" 1", "01", "+1", "-0", "1.0", "abc", ""}) {
    REQUIRE(f.store->Set(0, "bad", bad, SetPlain()).ok());
    CHECK_MESSAGE(f.store->IncrBy(0, "bad", 1).status().code() == Code::kNotInteger, bad);
  }
}

TEST_CASE("INCRBY on an expired key starts from 0 without TTL") {
  Fixture f;
  REQUIRE(f.store->Set(0, "n", "41", SetAt(kT0Ms + 1)).ok());
  f.AdvanceMs(2);
  CHECK(*f.store->IncrBy(0, "n", 1) == 1);
  CHECK(*f.store->PTtl(0, "n") == -1);
}

TEST_CASE("INCRBYFLOAT: formatting and errors as redis-server 7.0") {
  Fixture f;
  auto incr = [&](SV key, const char* stored, long double d) {
    REQUIRE(f.store->Set(0, key, stored, SetPlain()).ok());
    return f.store->IncrByFloat(0, key, d);
  };
  CHECK(*incr("a", "10.5", 0.1L) == "10.6");
  CHECK(*incr("b", "5.0e3", 0) == "5000");
  CHECK(*incr("c", "3", 1.1L) == "4.1");
  CHECK(*incr("d", "1", -1) == "0");
  CHECK(*incr("e", "0x10", 1) == "17");
  CHECK(*incr("g", "1.", 1) == "2");
  CHECK(*f.store->IncrByFloat(0, "fresh", 2.5L) == "2.5");
  CHECK(GetOrDie(*f.store, "fresh") == "2.5");
  CHECK(incr("h", " 1", 1).status().code() == Code::kNotFloat);
  CHECK(incr("i", "1e5000", 1).status().code() == Code::kNotFloat);
  auto inf = incr("j", "inf", 1);
  CHECK(inf.status().code() == Code::kInvalidArgument);
  CHECK(inf.status().message() == "increment would produce NaN or Infinity");
  CHECK(GetOrDie(*f.store, "j") == "inf");
  REQUIRE(f.store->ExpireAt(0, "a", kT0Ms + 50, ExpireCondition::kAlways).ok());
  CHECK(*f.store->IncrByFloat(0, "a", 1) == "11.6");
  CHECK(*f.store->PTtl(0, "a") == 50);
}

TEST_CASE("APPEND, STRLEN and the size limit") {
  Fixture f;
  CHECK(*f.store->StrLen(0, "s") == 0);
  CHECK(*f.store->Append(0, "s", "hello") == 5);
  CHECK(*f.store->Append(0, "s", " world") == 11);
  CHECK(GetOrDie(*f.store, "s") == "hello world");
  CHECK(*f.store->StrLen(0, "s") == 11);
  f.store->set_max_value_bytes(12);
  CHECK(*f.store->Append(0, "s", "!") == 12);
  auto r = f.store->Append(0, "s", "!");
  CHECK(r.status().code() == Code::kInvalidArgument);
  CHECK(r.status().message() == "string exceeds maximum allowed size (proto-max-bulk-len)");
  CHECK(*f.store->StrLen(0, "s") == 12);
}

TEST_CASE("APPEND of nothing creates an empty string; SET GET with a past expiry") {
  Fixture f;
  CHECK(*f.store->Append(0, "e", "") == 0);
  CHECK(*f.store->Exists(0, std::vector<SV>{"e"}) == 1);
  CHECK(GetOrDie(*f.store, "e") == "");
  REQUIRE(f.store->Set(0, "k", "v", SetPlain()).ok());
  SetOptions o = SetAt(1);
  o.return_old = true;
  auto r = f.store->Set(0, "k", "v2", o);
  CHECK(r->written);
  CHECK(r->old_value == "v");
  CHECK(*f.store->Exists(0, std::vector<SV>{"k"}) == 0);
}

TEST_CASE("GETRANGE: negative indexes and clamping") {
  Fixture f;
  REQUIRE(f.store->Set(0, "s", "hello", SetPlain()).ok());
  auto gr = [&](int64_t a, int64_t b) { return *f.store->GetRange(0, "s", a, b); };
  CHECK(gr(0, -1) == "hello");
  CHECK(gr(-1, -5) == "");
  CHECK(gr(0, -100) == "h");
  CHECK(gr(-100, -1) == "hello");
  CHECK(gr(3, 1000) == "lo");
  CHECK(gr(-3, -2) == "ll");
  CHECK(gr(4, 2) == "");
  CHECK(gr(10, 20) == "");
  CHECK(gr(INT64_MIN, INT64_MAX) == "hello");
  CHECK(*f.store->GetRange(0, "missing", 0, -1) == "");
  REQUIRE(f.store->Set(0, "e", "", SetPlain()).ok());
  CHECK(*f.store->GetRange(0, "e", 0, -1) == "");
}

TEST_CASE("SETRANGE: padding, empty value, limits") {
  Fixture f;
  CHECK(*f.store->SetRange(0, "k", 0, "") == 0);
  CHECK(*f.store->Exists(0, std::vector<SV>{"k"}) == 0);
  CHECK(*f.store->SetRange(0, "k", 3, "ab") == 5);
  CHECK(GetOrDie(*f.store, "k") == std::string("\0\0\0ab", 5));
  CHECK(*f.store->SetRange(0, "k", 1, "XYZW") == 5);
  CHECK(GetOrDie(*f.store, "k") == std::string("\0XYZW", 5));
  CHECK(*f.store->SetRange(0, "k", 100, "") == 5);
  f.store->set_max_value_bytes(10);
  CHECK(*f.store->SetRange(0, "k", 8, "ab") == 10);
  auto r = f.store->SetRange(0, "k", 9, "ab");
  CHECK(r.status().message() == "string exceeds maximum allowed size (proto-max-bulk-len)");
  CHECK(f.store->SetRange(0, "new", INT64_MAX, "a").status().code() == Code::kInvalidArgument);
  CHECK(f.store->SetRange(0, "k", -1, "a").status().code() == Code::kInvalidArgument);
  REQUIRE(f.store->ExpireAt(0, "k", kT0Ms + 77, ExpireCondition::kAlways).ok());
  CHECK(*f.store->SetRange(0, "k", 0, "z") == 10);
  CHECK(*f.store->PTtl(0, "k") == 77);
}

}  // namespace sluice::testing

namespace sluice::testing {

TEST_CASE("string commands on a non-string key: WRONGTYPE, and SET overwrites") {
  Fixture f;
  f.PutRaw(0, "L", ValueKind::kLeaky, "state");
  auto wrong = [](const Status& s) { return s.code() == Code::kWrongType; };
  CHECK(wrong(f.store->Get(0, "L").status()));
  CHECK(wrong(f.store->GetDel(0, "L").status()));
  CHECK(wrong(f.store->GetEx(0, "L", {}).status()));
  CHECK(wrong(f.store->IncrBy(0, "L", 1).status()));
  CHECK(wrong(f.store->IncrByFloat(0, "L", 1).status()));
  CHECK(wrong(f.store->Append(0, "L", "x").status()));
  CHECK(wrong(f.store->StrLen(0, "L").status()));
  CHECK(wrong(f.store->GetRange(0, "L", -1, -5).status()));  // 7.0 checks the type first
  CHECK(wrong(f.store->SetRange(0, "L", 0, "").status()));
  SetOptions get;
  get.return_old = true;
  CHECK(wrong(f.store->Set(0, "L", "v", get).status()));
  std::vector<std::string_view> keys{"L"};
  CHECK(*f.store->MGet(0, keys) == std::vector<std::optional<std::string>>{std::nullopt});
  CHECK(**f.store->Type(0, "L") == ValueKind::kLeaky);
  CHECK(f.store->Set(0, "L", "now a string", SetPlain())->written);
  CHECK(*f.store->Get(0, "L") == "now a string");
}

TEST_CASE("corrupt stored bytes are reported, not misread") {
  Fixture f;
  f.store.reset();
  {
    RawStoreDb raw(f.dir.path(), f.clock);
    REQUIRE(raw->Put(rocksdb::WriteOptions(), internal::EncodeKey(0, "bad"), "\x7f").ok());
  }
  f.store = OpenStore(f.dir.path(), f.clock);
  CHECK(f.store->Get(0, "bad").status().code() == Code::kCorruption);
  CHECK(f.store->IncrBy(0, "bad", 1).status().code() == Code::kCorruption);
}

}  // namespace sluice::testing

namespace sluice::testing {

TEST_CASE("plain SET (no NX/XX/GET/KEEPTTL) overwrites without reading, same results") {
  Fixture f;
  REQUIRE(f.store->Set(0, "k", "v1", SetAt(kT0Ms + 100))->written);
  CHECK(*f.store->PTtl(0, "k") == 100);
  REQUIRE(f.store->Set(0, "k", "v2", SetPlain())->written);  // clears the TTL
  CHECK(*f.store->Get(0, "k") == "v2");
  CHECK(*f.store->PTtl(0, "k") == -1);
  REQUIRE(f.store->Set(0, "k", "v3", SetAt(kT0Ms + 50))->written);
  CHECK(*f.store->PTtl(0, "k") == 50);
  f.AdvanceMs(51);
  CHECK(*f.store->Get(0, "k") == std::nullopt);
  REQUIRE(f.store->Set(0, "k", "v4", SetPlain())->written);  // over an expired value
  CHECK(*f.store->Get(0, "k") == "v4");
  CHECK(*f.store->PTtl(0, "k") == -1);
  REQUIRE(f.store->Set(0, "k", "v5", SetAt(kT0Ms))->written);  // already past: deleted
  CHECK(*f.store->Get(0, "k") == std::nullopt);
  CHECK(*f.store->PTtl(0, "k") == -2);
  f.Reopen();
  CHECK(*f.store->PTtl(0, "k") == -2);
}

TEST_CASE("a string edited in place is raw until a new value replaces it, across a reopen") {
  Fixture f;
  auto encoding = [&](SV key) {
    auto e = f.store->ObjectEncoding(0, key);
    REQUIRE(e.ok());
    return e->value_or("(none)");
  };
  REQUIRE(f.store->Set(0, "k", "12", SetPlain()).ok());
  CHECK(encoding("k") == "int");
  REQUIRE(*f.store->Append(0, "k", "3") == 3);
  CHECK(encoding("k") == "raw");
  REQUIRE(*f.store->Rename(0, "k", "k2", false));
  CHECK(encoding("k2") == "raw");
  REQUIRE(*f.store->Persist(0, "k2") == false);
  f.Reopen();
  CHECK(encoding("k2") == "raw");
  CHECK(GetOrDie(*f.store, "k2") == "123");
  REQUIRE(f.store->Set(0, "k2", "123", SetPlain()).ok());
  CHECK(encoding("k2") == "int");
  // APPEND creating a key stores the value as given; SETRANGE creating one builds it in place.
  REQUIRE(*f.store->Append(0, "new", "7") == 1);
  CHECK(encoding("new") == "int");
  REQUIRE(*f.store->SetRange(0, "built", 0, "7") == 1);
  CHECK(encoding("built") == "raw");
  // A SETRANGE of nothing changes nothing.
  REQUIRE(f.store->Set(0, "same", "99", SetPlain()).ok());
  REQUIRE(*f.store->SetRange(0, "same", 1, "") == 2);
  CHECK(encoding("same") == "int");
}

}  // namespace sluice::testing
