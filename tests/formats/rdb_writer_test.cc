// RdbWriter: what it writes reads back whole (every Redis type, expiries, databases, AUX fields
// a visitor sees), with a valid CRC64; a real redis-server loading it is covered by the
// black-box replication tests (a redis-server replica's full sync).
#include "storage/formats/rdb_writer.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sluice/store.h"
#include "storage/formats/rdb_file.h"

namespace sluice::formats {
namespace {

TEST_CASE("RdbWriter: every type, expiry, db and AUX field reads back") {
  std::vector<RdbKey> keys;
  WholeValue s;
  s.kind = ValueKind::kString;
  s.string = "hello";
  WholeValue n;
  n.kind = ValueKind::kString;
  n.string = "12345";
  WholeValue l;
  l.kind = ValueKind::kList;
  l.elements = {"a", "b", std::string(300, 'c')};
  WholeValue set;
  set.kind = ValueKind::kSet;
  set.elements = {"1", "2", "x"};
  WholeValue h;
  h.kind = ValueKind::kHash;
  h.fields = {{"f", "v"}, {"g", std::string(100, 'w')}};
  WholeValue z;
  z.kind = ValueKind::kZSet;
  z.scored = {{"m", 1.5}, {"n", -2}};
  std::string out;
  RdbWriter w(&out);
  w.Begin(1700000000, std::string(40, 'a'), 42);
  w.Aux("sluice-entry", "payload");
  w.SelectDb(0);
  w.Key("s", s, 0);
  w.Key("n", n, 1700000000123);
  w.Key("l", l, 0);
  w.SelectDb(3);
  w.Key("set", set, 0);
  w.Key("h", h, 5);
  w.Key("z", z, 0);
  w.Finish();
  CHECK(out.substr(0, 9) == "REDIS0010");
  std::vector<std::pair<std::string, std::string>> aux;
  RdbVisitor v;
  v.key = [&](RdbKey& k) {
    keys.push_back(k);
    return Status::Ok();
  };
  v.aux = [&](std::string_view name, std::string_view value) {
    aux.emplace_back(std::string(name), std::string(value));
    return Status::Ok();
  };
  REQUIRE(ReadRdbFile(out, v).ok());
  REQUIRE(keys.size() == 6);
  CHECK(keys[0].db == 0);
  CHECK(keys[0].key == "s");
  CHECK(keys[0].value == s);
  CHECK(keys[1].expire_at_ms == 1700000000123);
  CHECK(keys[1].value.string == "12345");
  CHECK(keys[2].value == l);
  CHECK(keys[3].db == 3);
  CHECK(keys[3].value.elements.size() == 3);
  CHECK(keys[4].value == h);
  CHECK(keys[4].expire_at_ms == 5);
  CHECK(keys[5].value == z);
  bool saw_entry = false, saw_id = false;
  for (auto& [name, value] : aux) {
    if (name == "sluice-entry") saw_entry = value == "payload";
    if (name == "repl-id") saw_id = value == std::string(40, 'a');
  }
  CHECK(saw_entry);
  CHECK(saw_id);
  // A damaged byte fails the checksum.
  out[20] = static_cast<char>(out[20] ^ 1);
  CHECK(!ReadRdbFile(out, v).ok());
}

TEST_CASE("RdbWriter: function libraries read back before the keys") {
  std::string out;
  RdbWriter w(&out);
  w.Begin(1700000000);
  const std::string code = "#!lua name=mylib\nredis.register_function('f', function() end)";
  w.Function(code);
  w.SelectDb(0);
  WholeValue s;
  s.kind = ValueKind::kString;
  s.string = "v";
  w.Key("k", s, 0);
  w.Finish();
  std::vector<std::string> seen;
  RdbVisitor v;
  v.function = [&](std::string_view c) {
    seen.emplace_back(c);
    return Status::Ok();
  };
  v.key = [&](RdbKey& k) {
    seen.push_back(k.key);
    return Status::Ok();
  };
  REQUIRE(ReadRdbFile(out, v).ok());
  CHECK(seen == std::vector<std::string>{code, "k"});
}

}  // namespace
}  // namespace sluice::formats
