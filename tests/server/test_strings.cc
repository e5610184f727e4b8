// String commands through the real dispatcher and Store. Every expected reply below was checked
// against redis-server 7.0.15 (manual clock here, so TTLs are exact).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sluice/limiter.h"
#include "tests/server/harness.h"

namespace sluice::server::testing {

namespace {

const std::string kWrongType = WrongTypeErr();
const std::string kNotInt = NotIntegerErr();
const std::string kNotFloat = NotFloatErr();
const std::string kSyntax = SyntaxErr();

std::string Arity(const std::string& cmd) { return ArityErr(cmd); }
std::string BadExpire(const std::string& cmd) { return BadExpireErr(cmd); }

}  // namespace

TEST_CASE("string commands check arity") {
  Harness h;
  struct Case {
    const char* line;
    const char* name;
  };
  const std::vector<Case> cases = {
      {"get", "get"},
      {"get a b", "get"},
      {"set a", "set"},
      {"setnx a", "setnx"},
      {"setnx a b c", "setnx"},
      {"setex a 1", "setex"},
      {"psetex a 1", "psetex"},
      {"getset a", "getset"},
      {"getdel", "getdel"},
      {"getdel a b", "getdel"},
      {"getex", "getex"},
      {"mget", "mget"},
      {"mset a", "mset"},
      {"msetnx a", "msetnx"},
      {"incr", "incr"},
      {"incr a b", "incr"},
      {"decr", "decr"},
      {"incrby a", "incrby"},
      {"decrby a", "decrby"},
      {"incrbyfloat a", "incrbyfloat"},
      {"append a", "append"},
      {"strlen", "strlen"},
      {"getrange a 1", "getrange"},
      {"substr a 1", "substr"},
      {"setrange a 1", "setrange"},
      {"setrange a 1 b c", "setrange"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.line);
    CHECK(h.Cmd(c.line) == Arity(c.name));
  }
  // MSET/MSETNX pass the table's arity but need pairs.
  CHECK(h.Cmd("mset a 1 b") == Arity("mset"));
  CHECK(h.Cmd("msetnx a 1 b") == Arity("msetnx"));
  CHECK(h.Cmd("exists a b") == Int(0));  // nothing was written by the failures
}

TEST_CASE("GET and SET basics, RESP2 and RESP3 nulls") {
  Harness h;
  CHECK(h.Cmd("get k") == Nil());
  CHECK(h.Cmd("set k v") == Ok());
  CHECK(h.Cmd("get k") == Bulk("v"));
  CHECK(h.Run({"set", "sp", "a b\r\nc"}) == Ok());
  CHECK(h.Cmd("get sp") == Bulk("a b\r\nc"));
  CHECK(h.Run({"set", "empty", ""}) == Ok());
  CHECK(h.Cmd("get empty") == Bulk(""));
  CHECK(h.Cmd("SET k2 V2") == Ok());
  CHECK(h.Cmd("get k2") == Bulk("V2"));
  h.Resp3();
  CHECK(h.Cmd("get missing") == Null());
  CHECK(h.Cmd("set missing v xx") == Null());
  CHECK(h.Cmd("getdel missing") == Null());
}

TEST_CASE("SET NX, XX and GET") {
  Harness h;
  CHECK(h.Cmd("set k v xx") == Nil());
  CHECK(h.Cmd("get k") == Nil());
  CHECK(h.Cmd("set k v nx") == Ok());
  CHECK(h.Cmd("set k w nx") == Nil());
  CHECK(h.Cmd("get k") == Bulk("v"));
  CHECK(h.Cmd("set k w xx") == Ok());
  CHECK(h.Cmd("get k") == Bulk("w"));
  CHECK(h.Cmd("set k x get") == Bulk("w"));
  CHECK(h.Cmd("set nokey x get") == Nil());
  CHECK(h.Cmd("get nokey") == Bulk("x"));
  CHECK(h.Cmd("set nokey2 v xx get") == Nil());
  CHECK(h.Cmd("exists nokey2") == Int(0));
  // Redis 7.0 accepts NX with GET: the old value comes back and nothing is written.
  CHECK(h.Cmd("set k y nx get") == Bulk("x"));
  CHECK(h.Cmd("get k") == Bulk("x"));
  CHECK(h.Cmd("set fresh y NX GET") == Nil());
  CHECK(h.Cmd("get fresh") == Bulk("y"));
  // Repeating a keyword is fine.
  CHECK(h.Cmd("set k z nx nx") == Nil());
  CHECK(h.Cmd("set k z get get") == Bulk("x"));
}

TEST_CASE("SET option errors and precedence") {
  Harness h;
  CHECK(h.Cmd("set k v nx xx") == kSyntax);
  CHECK(h.Cmd("set k v xx nx") == kSyntax);
  CHECK(h.Cmd("set k v ex 1 px 1") == kSyntax);
  CHECK(h.Cmd("set k v ex 1 keepttl") == kSyntax);
  CHECK(h.Cmd("set k v keepttl pxat 1") == kSyntax);
  CHECK(h.Cmd("set k v exat 1 ex 1") == kSyntax);
  CHECK(h.Cmd("set k v ex") == kSyntax);
  CHECK(h.Cmd("set k v foo") == kSyntax);
  CHECK(h.Cmd("set k v persist") == kSyntax);  // GETEX's option, not SET's
  // Syntax is checked before the time value.
  CHECK(h.Cmd("set k v ex abc nx xx") == kSyntax);
  CHECK(h.Cmd("set k v ex abc") == kNotInt);
  CHECK(h.Run({"set", "k", "v", "ex", " 1"}) == kNotInt);
  CHECK(h.Cmd("set k v ex 1.5") == kNotInt);
  CHECK(h.Cmd("set k v ex +1") == kNotInt);
  CHECK(h.Cmd("set k v ex 0") == BadExpire("set"));
  CHECK(h.Cmd("set k v ex -1") == BadExpire("set"));
  CHECK(h.Cmd("set k v px 0") == BadExpire("set"));
  CHECK(h.Cmd("set k v exat 0") == BadExpire("set"));
  CHECK(h.Cmd("set k v pxat -1") == BadExpire("set"));
  // Overflow: of the seconds-to-ms scaling, and of adding now.
  CHECK(h.Cmd("set k v ex 9223372036854775807") == BadExpire("set"));
  CHECK(h.Cmd("set k v ex 9223372036854776") == BadExpire("set"));
  CHECK(h.Cmd("set k v ex 9223372036854775") == BadExpire("set"));
  CHECK(h.Cmd("set k v px 9223372036854775807") == BadExpire("set"));
  CHECK(h.Cmd("set k v ex 9223372036854775808") == kNotInt);
  CHECK(h.Cmd("exists k") == Int(0));
  // The largest absolute times are fine.
  CHECK(h.Cmd("set k v pxat 9223372036854775807") == Ok());
  CHECK(h.Cmd("pexpiretime k") == Int(9223372036854775807));
  CHECK(h.Cmd("set k v exat 9223372036854775") == Ok());
  CHECK(h.Cmd("pexpiretime k") == Int(9223372036854775000));
  CHECK(h.Cmd("set k v ex 9223372036854") == Ok());
  CHECK(h.Cmd("pttl k") == Int(9223372036854000));
  // The time is checked before the type of the old value.
  MakeNonString(h, "conc");
  CHECK(h.Cmd("set conc v ex 0 get") == BadExpire("set"));
}

TEST_CASE("SET expiry options and KEEPTTL") {
  Harness h;
  CHECK(h.Cmd("set k v ex 10") == Ok());
  CHECK(h.Cmd("ttl k") == Int(10));
  CHECK(h.Cmd("pttl k") == Int(10000));
  CHECK(h.Cmd("set k v px 1500") == Ok());
  CHECK(h.Cmd("pttl k") == Int(1500));
  CHECK(h.Cmd("ttl k") == Int(2));  // rounded to nearest, as Redis
  CHECK(h.Cmd("set k v2 keepttl") == Ok());
  CHECK(h.Cmd("pttl k") == Int(1500));
  CHECK(h.Cmd("get k") == Bulk("v2"));
  CHECK(h.Cmd("set k v3") == Ok());  // a plain SET clears the TTL
  CHECK(h.Cmd("ttl k") == Int(-1));
  CHECK(h.Cmd("set k v EXAT 1700000000100") == Ok());
  CHECK(h.Cmd("expiretime k") == Int(1700000000100));
  CHECK(h.Cmd("set k v pxat 1700000000500") == Ok());
  CHECK(h.Cmd("pttl k") == Int(500));
  // The last of repeated EX wins.
  CHECK(h.Cmd("set k v ex 1 ex 2") == Ok());
  CHECK(h.Cmd("ttl k") == Int(2));
  CHECK(h.Cmd("set k v px 100") == Ok());
  h.AdvanceMs(100);
  CHECK(h.Cmd("get k") == Bulk("v"));  // expired only once now > expiry, as Redis
  h.AdvanceMs(1);
  CHECK(h.Cmd("get k") == Nil());
  // A time already in the past writes nothing that survives, but still answers.
  CHECK(h.Cmd("set k v") == Ok());
  CHECK(h.Cmd("set k w pxat 1") == Ok());
  CHECK(h.Cmd("exists k") == Int(0));
  CHECK(h.Cmd("set k v") == Ok());
  CHECK(h.Cmd("set k w exat 1 get") == Bulk("v"));
  CHECK(h.Cmd("exists k") == Int(0));
}

TEST_CASE("SET on a non-string key overwrites it; SET GET is WRONGTYPE") {
  Harness h;
  MakeNonString(h, "c");
  CHECK(h.Cmd("set c v get") == kWrongType);
  CHECK(h.Cmd("type c") == Simple("conc"));
  CHECK(h.Cmd("set c v") == Ok());
  CHECK(h.Cmd("type c") == Simple("string"));
  CHECK(h.Cmd("get c") == Bulk("v"));
}

TEST_CASE("SETNX, SETEX, PSETEX, GETSET") {
  Harness h;
  CHECK(h.Cmd("setnx k v") == Int(1));
  CHECK(h.Cmd("setnx k w") == Int(0));
  CHECK(h.Cmd("get k") == Bulk("v"));
  CHECK(h.Cmd("setex k 10 a") == Ok());
  CHECK(h.Cmd("get k") == Bulk("a"));
  CHECK(h.Cmd("ttl k") == Int(10));
  CHECK(h.Cmd("psetex k 1234 b") == Ok());
  CHECK(h.Cmd("pttl k") == Int(1234));
  CHECK(h.Cmd("setex k 0 v") == BadExpire("setex"));
  CHECK(h.Cmd("setex k -1 v") == BadExpire("setex"));
  CHECK(h.Cmd("setex k 9223372036854775 v") == BadExpire("setex"));
  CHECK(h.Cmd("setex k abc v") == kNotInt);
  CHECK(h.Run({"setex", "k", "1 ", "v"}) == kNotInt);
  CHECK(h.Cmd("psetex k 0 v") == BadExpire("psetex"));
  CHECK(h.Cmd("psetex k 9223372036854775807 v") == BadExpire("psetex"));
  CHECK(h.Cmd("psetex k 1.5 v") == kNotInt);
  CHECK(h.Cmd("get k") == Bulk("b"));
  CHECK(h.Cmd("getset k c") == Bulk("b"));
  CHECK(h.Cmd("ttl k") == Int(-1));  // GETSET clears the TTL
  CHECK(h.Cmd("getset new x") == Nil());
  CHECK(h.Cmd("get new") == Bulk("x"));
  MakeNonString(h, "conc");
  CHECK(h.Cmd("getset conc x") == kWrongType);
  CHECK(h.Cmd("setnx conc x") == Int(0));
  CHECK(h.Cmd("setex conc 10 x") == Ok());  // overwrites, as Redis
  CHECK(h.Cmd("get conc") == Bulk("x"));
  h.AdvanceMs(10001);
  CHECK(h.Cmd("get conc") == Nil());
}

TEST_CASE("GETDEL and GETEX") {
  Harness h;
  CHECK(h.Cmd("getdel k") == Nil());
  CHECK(h.Cmd("set k v ex 100") == Ok());
  CHECK(h.Cmd("getdel k") == Bulk("v"));
  CHECK(h.Cmd("exists k") == Int(0));
  CHECK(h.Cmd("set k v ex 100") == Ok());
  CHECK(h.Cmd("getex k") == Bulk("v"));
  CHECK(h.Cmd("ttl k") == Int(100));  // no option: TTL kept
  CHECK(h.Cmd("getex k persist") == Bulk("v"));
  CHECK(h.Cmd("ttl k") == Int(-1));
  CHECK(h.Cmd("getex k px 5000") == Bulk("v"));
  CHECK(h.Cmd("pttl k") == Int(5000));
  CHECK(h.Cmd("getex k ex 7") == Bulk("v"));
  CHECK(h.Cmd("pttl k") == Int(7000));
  CHECK(h.Cmd("getex k exat 1700000000009") == Bulk("v"));
  CHECK(h.Cmd("expiretime k") == Int(1700000000009));
  CHECK(h.Cmd("getex k pxat 1700000000300") == Bulk("v"));
  CHECK(h.Cmd("pttl k") == Int(300));
  CHECK(h.Cmd("getex k ex 1 ex 2") == Bulk("v"));
  CHECK(h.Cmd("pttl k") == Int(2000));
  CHECK(h.Cmd("getex k persist persist") == Bulk("v"));
  CHECK(h.Cmd("getex k pxat 1") == Bulk("v"));  // in the past: the key is deleted
  CHECK(h.Cmd("exists k") == Int(0));
  CHECK(h.Cmd("getex k") == Nil());
  CHECK(h.Cmd("set k v") == Ok());
  // Errors: syntax first, then a missing key (nil) or WRONGTYPE, then the time value.
  CHECK(h.Cmd("getex k persist ex 1") == kSyntax);
  CHECK(h.Cmd("getex k keepttl") == kSyntax);
  CHECK(h.Cmd("getex k get") == kSyntax);
  CHECK(h.Cmd("getex k nx") == kSyntax);
  CHECK(h.Cmd("getex k foo") == kSyntax);
  CHECK(h.Cmd("getex k ex") == kSyntax);
  CHECK(h.Cmd("getex nokey foo") == kSyntax);
  CHECK(h.Cmd("getex k ex 0") == BadExpire("getex"));
  CHECK(h.Cmd("getex k exat 0") == BadExpire("getex"));
  CHECK(h.Cmd("getex k ex 9223372036854775") == BadExpire("getex"));
  CHECK(h.Cmd("getex k px 9223372036854775807") == BadExpire("getex"));
  CHECK(h.Cmd("getex k ex abc") == kNotInt);
  CHECK(h.Cmd("getex k exat 9223372036854775808") == kNotInt);
  CHECK(h.Cmd("getex nokey ex 0") == Nil());
  CHECK(h.Cmd("getex nokey ex abc") == Nil());
  CHECK(h.Cmd("ttl k") == Int(-1));
  MakeNonString(h, "conc");
  CHECK(h.Cmd("getex conc") == kWrongType);
  CHECK(h.Cmd("getex conc ex 0") == kWrongType);
  CHECK(h.Cmd("getex conc ex abc") == kWrongType);
  CHECK(h.Cmd("getex conc foo") == kSyntax);
  CHECK(h.Cmd("getdel conc") == kWrongType);
  CHECK(h.Cmd("get conc") == kWrongType);
}

TEST_CASE("MGET, MSET, MSETNX") {
  Harness h;
  CHECK(h.Cmd("mset a 1 b 2") == Ok());
  MakeNonString(h, "conc");
  CHECK(h.Cmd("mget a b nokey conc a") == Arr({Bulk("1"), Bulk("2"), Nil(), Nil(), Bulk("1")}));
  CHECK(h.Cmd("mset a 3 a 4") == Ok());  // the last pair wins
  CHECK(h.Cmd("get a") == Bulk("4"));
  CHECK(h.Cmd("msetnx a 1 c 3") == Int(0));
  CHECK(h.Cmd("exists c") == Int(0));  // all or nothing
  CHECK(h.Cmd("msetnx c 3 d 4") == Int(1));
  CHECK(h.Cmd("mget c d") == Arr({Bulk("3"), Bulk("4")}));
  CHECK(h.Cmd("msetnx conc 1") == Int(0));
  CHECK(h.Cmd("mset conc 1") == Ok());
  CHECK(h.Cmd("get conc") == Bulk("1"));
  CHECK(h.Cmd("set t v ex 10") == Ok());
  CHECK(h.Cmd("mset t w") == Ok());
  CHECK(h.Cmd("ttl t") == Int(-1));  // MSET clears TTLs like SET
  h.Resp3();
  CHECK(h.Cmd("mget a nokey") == Arr({Bulk("4"), Null()}));
}

TEST_CASE("INCR, DECR, INCRBY, DECRBY") {
  Harness h;
  CHECK(h.Cmd("incr n") == Int(1));
  CHECK(h.Cmd("incrby n 10") == Int(11));
  CHECK(h.Cmd("decr n") == Int(10));
  CHECK(h.Cmd("decrby n 15") == Int(-5));
  CHECK(h.Cmd("incrby n -5") == Int(-10));
  CHECK(h.Cmd("decrby n -20") == Int(10));
  CHECK(h.Cmd("get n") == Bulk("10"));
  CHECK(h.Cmd("decr fresh") == Int(-1));
  // The increment must be a canonical integer.
  for (const char* bad : {"abc", "1.5", "+1", "01", "-0", "", " 1", "1 ", "9223372036854775808"}) {
    CAPTURE(bad);
    CHECK(h.Run({"incrby", "n", bad}) == kNotInt);
    CHECK(h.Run({"decrby", "n", bad}) == kNotInt);
  }
  // And so must the stored value.
  for (const char* bad : {"abc", "1.5", "+1", "01", "-0", "", " 1", "1 ", "9223372036854775808"}) {
    CAPTURE(bad);
    CHECK(h.Run({"set", "s", bad}) == Ok());
    CHECK(h.Cmd("incr s") == kNotInt);
  }
  // Overflow.
  CHECK(h.Cmd("set n 9223372036854775807") == Ok());
  CHECK(h.Cmd("incr n") == Err("ERR increment or decrement would overflow"));
  CHECK(h.Cmd("incrby n 0") == Int(9223372036854775807));
  CHECK(h.Cmd("set n -9223372036854775808") == Ok());
  CHECK(h.Cmd("decr n") == Err("ERR increment or decrement would overflow"));
  CHECK(h.Cmd("decrby n 1") == Err("ERR increment or decrement would overflow"));
  CHECK(h.Cmd("incrby n -1") == Err("ERR increment or decrement would overflow"));
  CHECK(h.Cmd("get n") == Bulk("-9223372036854775808"));
  CHECK(h.Cmd("decrby n -9223372036854775808") == Err("ERR decrement would overflow"));
  CHECK(h.Cmd("decrby x -9223372036854775808") == Err("ERR decrement would overflow"));
  CHECK(h.Cmd("incrby x -9223372036854775808") == Int(INT64_MIN));
  // The TTL survives an increment.
  CHECK(h.Cmd("set t 5 ex 100") == Ok());
  CHECK(h.Cmd("incr t") == Int(6));
  CHECK(h.Cmd("ttl t") == Int(100));
  MakeNonString(h, "conc");
  CHECK(h.Cmd("incr conc") == kWrongType);
  CHECK(h.Cmd("decrby conc 2") == kWrongType);
  CHECK(h.Cmd("incrby conc abc") == kNotInt);  // the argument is checked first
}

TEST_CASE("INCRBYFLOAT") {
  Harness h;
  CHECK(h.Cmd("incrbyfloat f 1.1") == Bulk("1.1"));
  CHECK(h.Cmd("incrbyfloat f 2.2") == Bulk("3.3"));
  CHECK(h.Cmd("incrbyfloat b 5.0e3") == Bulk("5000"));
  CHECK(h.Cmd("incrbyfloat b -5000") == Bulk("0"));
  CHECK(h.Cmd("incrbyfloat c 1e-5") == Bulk("0.00001"));
  CHECK(h.Cmd("incrbyfloat d 0x10") == Bulk("16"));
  CHECK(h.Cmd("incrbyfloat e +1.5") == Bulk("1.5"));
  CHECK(h.Cmd("incrbyfloat g .5") == Bulk("0.5"));
  CHECK(h.Cmd("incrbyfloat i 1.") == Bulk("1"));
  CHECK(h.Cmd("set s 10.50") == Ok());
  CHECK(h.Cmd("incrbyfloat s 0") == Bulk("10.5"));
  CHECK(h.Cmd("set s 5") == Ok());
  CHECK(h.Cmd("incrbyfloat s 1.5e0") == Bulk("6.5"));
  CHECK(h.Cmd("incr s") == kNotInt);
  // Bad increments.
  for (const char* bad : {"abc", "nan", "", " 1", "1 ", "1.5x"}) {
    CAPTURE(bad);
    CHECK(h.Run({"incrbyfloat", "f", bad}) == kNotFloat);
  }
  CHECK(h.Cmd("incrbyfloat f inf") == Err("ERR increment would produce NaN or Infinity"));
  CHECK(h.Cmd("incrbyfloat f -inf") == Err("ERR increment would produce NaN or Infinity"));
  CHECK(h.Cmd("incrbyfloat f infinity") == Err("ERR increment would produce NaN or Infinity"));
  CHECK(h.Cmd("get f") == Bulk("3.3"));
  // Bad stored values.
  CHECK(h.Cmd("set f abc") == Ok());
  CHECK(h.Cmd("incrbyfloat f 1") == kNotFloat);
  CHECK(h.Cmd("incrbyfloat f inf") == kNotFloat);
  CHECK(h.Cmd("set f inf") == Ok());
  CHECK(h.Cmd("incrbyfloat f 1") == Err("ERR increment would produce NaN or Infinity"));
  MakeNonString(h, "conc");
  CHECK(h.Cmd("incrbyfloat conc 1") == kWrongType);
  CHECK(h.Cmd("incrbyfloat conc inf") == kWrongType);
  CHECK(h.Cmd("incrbyfloat conc abc") == kWrongType);  // the type is checked first here
  // A bulk string in RESP3 too.
  h.Resp3();
  CHECK(h.Cmd("incrbyfloat r 1.5") == Bulk("1.5"));
}

TEST_CASE("APPEND and STRLEN") {
  Harness h;
  CHECK(h.Cmd("strlen k") == Int(0));
  CHECK(h.Cmd("append k hello") == Int(5));
  CHECK(h.Run({"append", "k", " world"}) == Int(11));
  CHECK(h.Cmd("get k") == Bulk("hello world"));
  CHECK(h.Cmd("strlen k") == Int(11));
  CHECK(h.Run({"append", "e", ""}) == Int(0));
  CHECK(h.Cmd("exists e") == Int(1));  // APPEND creates the key even for ""
  CHECK(h.Cmd("set t a ex 100") == Ok());
  CHECK(h.Cmd("append t b") == Int(2));
  CHECK(h.Cmd("ttl t") == Int(100));
  // The size limit (proto-max-bulk-len) applies to the resulting string, inclusive.
  h.store().set_max_value_bytes(8);
  CHECK(h.Cmd("append lim 12345678") == Int(8));
  CHECK(h.Cmd("append lim 9") ==
        Err("ERR string exceeds maximum allowed size (proto-max-bulk-len)"));
  CHECK(h.Cmd("setrange lim 8 x") ==
        Err("ERR string exceeds maximum allowed size (proto-max-bulk-len)"));
  CHECK(h.Cmd("setrange lim 7 x") == Int(8));
  CHECK(h.Cmd("get lim") == Bulk("1234567x"));
  h.store().set_max_value_bytes(512LL << 20);
  MakeNonString(h, "conc");
  CHECK(h.Cmd("append conc x") == kWrongType);
  CHECK(h.Cmd("strlen conc") == kWrongType);
}

TEST_CASE("GETRANGE and SUBSTR") {
  Harness h;
  CHECK(h.Cmd("getrange nokey 0 1") == Bulk(""));
  CHECK(h.Cmd("set k hello") == Ok());
  CHECK(h.Cmd("getrange k 0 -1") == Bulk("hello"));
  CHECK(h.Cmd("getrange k 1 2") == Bulk("el"));
  CHECK(h.Cmd("substr k 1 2") == Bulk("el"));
  CHECK(h.Cmd("getrange k -3 -1") == Bulk("llo"));
  CHECK(h.Cmd("getrange k -100 100") == Bulk("hello"));
  CHECK(h.Cmd("getrange k 3 1") == Bulk(""));
  CHECK(h.Cmd("getrange k -1 -3") == Bulk(""));
  CHECK(h.Cmd("getrange k 4 100") == Bulk("o"));
  CHECK(h.Cmd("getrange k 5 7") == Bulk(""));
  CHECK(h.Cmd("getrange k -100 -50") == Bulk("h"));  // both clamp to 0, as Redis 7.0
  CHECK(h.Cmd("getrange k 1 -100") == Bulk(""));
  CHECK(h.Cmd("getrange k 9223372036854775807 -9223372036854775808") == Bulk(""));
  CHECK(h.Cmd("getrange k -9223372036854775808 9223372036854775807") == Bulk("hello"));
  CHECK(h.Run({"set", "e", ""}) == Ok());
  CHECK(h.Cmd("getrange e 0 -1") == Bulk(""));
  CHECK(h.Cmd("getrange k a 1") == kNotInt);
  CHECK(h.Cmd("getrange k 0 1.5") == kNotInt);
  CHECK(h.Run({"getrange", "k", " 0", "1"}) == kNotInt);
  MakeNonString(h, "conc");
  CHECK(h.Cmd("getrange conc 0 1") == kWrongType);
  CHECK(h.Cmd("getrange conc a 1") == kNotInt);
}

TEST_CASE("SETRANGE") {
  Harness h;
  CHECK(h.Cmd("setrange k 3 abc") == Int(6));
  CHECK(h.Cmd("get k") == Bulk(std::string("\0\0\0abc", 6)));
  CHECK(h.Cmd("setrange k 1 X") == Int(6));
  CHECK(h.Cmd("get k") == Bulk(std::string("\0X\0abc", 6)));
  CHECK(h.Cmd("setrange k 5 xyz") == Int(8));
  CHECK(h.Cmd("getrange k 3 -1") == Bulk("abxyz"));
  // An empty value never creates a key, but an existing key reports its length.
  CHECK(h.Run({"setrange", "nokey", "0", ""}) == Int(0));
  CHECK(h.Run({"setrange", "nokey", "536870912", ""}) == Int(0));
  CHECK(h.Cmd("exists nokey") == Int(0));
  CHECK(h.Run({"setrange", "k", "100", ""}) == Int(8));
  CHECK(h.Cmd("setrange k -1 x") == Err("ERR offset is out of range"));
  CHECK(h.Cmd("setrange k abc x") == kNotInt);
  CHECK(h.Run({"setrange", "k", "1 ", "x"}) == kNotInt);
  CHECK(h.Cmd("setrange k 536870912 x") ==
        Err("ERR string exceeds maximum allowed size (proto-max-bulk-len)"));
  CHECK(h.Cmd("setrange k 9223372036854775807 x") ==
        Err("ERR string exceeds maximum allowed size (proto-max-bulk-len)"));
  CHECK(h.Cmd("strlen k") == Int(8));
  MakeNonString(h, "conc");
  CHECK(h.Cmd("setrange conc 0 x") == kWrongType);
  CHECK(h.Cmd("setrange conc -1 x") == Err("ERR offset is out of range"));
}

TEST_CASE("OBJECT ENCODING of strings edited in place (Redis 7.0's replies)") {
  Harness h;
  CHECK(h.Cmd("set a 1234") == Ok());
  CHECK(h.Cmd("object encoding a") == Bulk("int"));
  CHECK(h.Cmd("setrange a 0 2") == Int(4));
  CHECK(h.Cmd("object encoding a") == Bulk("raw"));
  CHECK(h.Cmd("get a") == Bulk("2234"));
  CHECK(h.Cmd("expire a 100") == Int(1));
  CHECK(h.Cmd("object encoding a") == Bulk("raw"));
  CHECK(h.Cmd("copy a b") == Int(1));
  CHECK(h.Cmd("object encoding b") == Bulk("raw"));
  CHECK(h.Cmd("incr b") == Int(2235));
  CHECK(h.Cmd("object encoding b") == Bulk("int"));
  CHECK(h.Cmd("set c hello") == Ok());
  CHECK(h.Cmd("append c x") == Int(6));
  CHECK(h.Cmd("object encoding c") == Bulk("raw"));
  CHECK(h.Cmd("setbit d 1 1") == Int(0));
  CHECK(h.Cmd("object encoding d") == Bulk("raw"));
  CHECK(h.Cmd("pfadd p x") == Int(1));
  CHECK(h.Cmd("object encoding p") == Bulk("raw"));
  CHECK(h.Cmd("set e 5") == Ok());
  CHECK(h.Cmd("bitfield e get u8 0") == Arr({Int(53)}));  // a read leaves it alone
  CHECK(h.Cmd("object encoding e") == Bulk("int"));
}

}  // namespace sluice::server::testing
