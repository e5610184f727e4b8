// Bitmaps, HyperLogLog and LCS through the real dispatcher: argument errors in Redis's order and
// texts, and the replies that depend on them. Every expected reply was checked against
// redis-server 7.0.15 (tests/blackbox/test_data_commands.py compares the rest side by side).
#include <doctest/doctest.h>

#include <string>

#include "tests/server/harness.h"

namespace sluice::server::testing {

namespace {
const std::string kOffset = Err("ERR bit offset is not an integer or out of range");
}  // namespace

TEST_CASE("SETBIT/GETBIT: offsets, bit values and types") {
  Harness h;
  CHECK(h.Cmd("SETBIT b 7 1") == Int(0));
  CHECK(h.Cmd("SETBIT b 7 1") == Int(1));
  CHECK(h.Cmd("GET b") == Bulk("\x01"));
  CHECK(h.Cmd("GETBIT b 7") == Int(1));
  CHECK(h.Cmd("GETBIT b 99999") == Int(0));
  CHECK(h.Cmd("SETBIT b -1 1") == kOffset);
  CHECK(h.Cmd("SETBIT b 4294967296 1") == kOffset);  // byte 512 MB: past proto-max-bulk-len
  CHECK(h.Cmd("GETBIT b 4294967296") == kOffset);
  CHECK(h.Cmd("SETBIT b 1 2") == Err("ERR bit is not an integer or out of range"));
  CHECK(h.Cmd("SETBIT b x 2") == kOffset);  // the offset is checked first
  CHECK(h.Cmd("LPUSH l x") == Int(1));
  CHECK(h.Cmd("SETBIT l 1 1") == WrongTypeErr());
  CHECK(h.Cmd("SETBIT l 1 5") == Err("ERR bit is not an integer or out of range"));
  CHECK(h.Cmd("GETBIT l 1") == WrongTypeErr());
  CHECK(h.Cmd("SETBIT b 1") == ArityErr("setbit"));
}

TEST_CASE("BITCOUNT/BITPOS: the key is looked at before a bad range") {
  Harness h;
  CHECK(h.Cmd("SET s foobar") == Ok());
  CHECK(h.Cmd("BITCOUNT s 5 30 BIT") == Int(17));
  CHECK(h.Cmd("BITCOUNT s 0") == SyntaxErr());
  CHECK(h.Cmd("BITCOUNT s a 1") == NotIntegerErr());
  CHECK(h.Cmd("BITCOUNT s -1 -5 WORD") == Int(0));  // Redis answers before reading the unit
  CHECK(h.Cmd("BITCOUNT s 0 1 WORD") == SyntaxErr());
  CHECK(h.Cmd("BITCOUNT nokey a b") == Int(0));
  CHECK(h.Cmd("LPUSH l x") == Int(1));
  CHECK(h.Cmd("BITCOUNT l a b") == WrongTypeErr());
  CHECK(h.Cmd("BITPOS s 2") == Err("ERR The bit argument must be 1 or 0."));
  CHECK(h.Cmd("BITPOS l 2") == Err("ERR The bit argument must be 1 or 0."));
  CHECK(h.Cmd("BITPOS s x") == NotIntegerErr());
  CHECK(h.Cmd("BITPOS nokey 0 x") == Int(0));
  CHECK(h.Cmd("BITPOS nokey 1 x") == Int(-1));
  CHECK(h.Cmd("BITPOS l 1 x") == WrongTypeErr());
  CHECK(h.Cmd("BITPOS s 1 x 1 WORD") == NotIntegerErr());
  CHECK(h.Cmd("BITPOS s 1 0 x WORD") == SyntaxErr());  // the unit before the end
  CHECK(h.Cmd("BITPOS s 1 0 1 BIT x") == SyntaxErr());
  CHECK(h.Cmd("BITPOS s 1 2") == Int(17));
}

TEST_CASE("BITOP: operations, NOT's single key, an empty result deletes") {
  Harness h;
  CHECK(h.Cmd("SET a foobar") == Ok());
  CHECK(h.Cmd("BITOP NAND d a") == SyntaxErr());
  CHECK(h.Cmd("BITOP NOT d a a") == Err("ERR BITOP NOT must be called with a single source key."));
  CHECK(h.Cmd("BITOP and d a nokey") == Int(6));
  CHECK(h.Run({"GET", "d"}) == Bulk(std::string(6, '\0')));
  CHECK(h.Cmd("BITOP OR d nokey") == Int(0));
  CHECK(h.Cmd("EXISTS d") == Int(0));
  CHECK(h.Cmd("LPUSH l x") == Int(1));
  CHECK(h.Cmd("BITOP OR d a l") == WrongTypeErr());
  CHECK(h.Cmd("BITOP OR l a") == Int(6));  // the destination is overwritten whatever it held
  CHECK(h.Cmd("BITOP OR d") == ArityErr("bitop"));
}

TEST_CASE("BITFIELD: subcommand errors, overflow modes, BITFIELD_RO") {
  Harness h;
  const std::string kType = Err(
      "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but "
      "i64 is.");
  CHECK(h.Cmd("BITFIELD f GET u64 0") == kType);
  CHECK(h.Cmd("BITFIELD f GET i65 0") == kType);
  CHECK(h.Cmd("BITFIELD f GET x8 0") == kType);
  CHECK(h.Cmd("BITFIELD f GET u8 #-1") == kOffset);
  CHECK(h.Cmd("BITFIELD f SET u8 0 x") == NotIntegerErr());
  CHECK(h.Cmd("BITFIELD f OVERFLOW BAD GET u8 0") == Err("ERR Invalid OVERFLOW type specified"));
  CHECK(h.Cmd("BITFIELD f GET u8") == SyntaxErr());
  CHECK(h.Cmd("BITFIELD f OVERFLOW FAIL SET u2 100 9") == Arr({Nil()}));
  CHECK(h.Cmd("STRLEN f") == Int(13));  // grown to the failed write's bits all the same
  CHECK(h.Cmd("BITFIELD f OVERFLOW SAT INCRBY i8 #0 -300 SET u8 #1 7") == Arr({Int(-128), Int(0)}));
  CHECK(h.Cmd("BITFIELD_RO f GET i8 0 GET u8 #1") == Arr({Int(-128), Int(7)}));
  CHECK(h.Cmd("BITFIELD_RO f SET u8 0 1") ==
        Err("ERR BITFIELD_RO only supports the GET subcommand"));
  CHECK(h.Cmd("BITFIELD g GET u8 0") == Arr({Int(0)}));
  CHECK(h.Cmd("EXISTS g") == Int(0));
  CHECK(h.Cmd("LPUSH l x") == Int(1));
  CHECK(h.Cmd("BITFIELD_RO l SET u8 0 1") ==
        Err("ERR BITFIELD_RO only supports the GET subcommand"));
  CHECK(h.Cmd("BITFIELD l GET u8 0") == WrongTypeErr());
}

TEST_CASE("PFADD/PFCOUNT/PFMERGE: not an HLL, cached counts, merges") {
  Harness h;
  CHECK(h.Cmd("PFADD h a b c") == Int(1));
  CHECK(h.Cmd("PFADD h a") == Int(0));
  CHECK(h.Cmd("PFCOUNT h") == Int(3));
  CHECK(h.Cmd("PFADD e") == Int(1));
  CHECK(h.Cmd("PFCOUNT h e nokey") == Int(3));
  CHECK(h.Cmd("PFMERGE m h e") == Ok());
  CHECK(h.Cmd("PFCOUNT m") == Int(3));
  const std::string not_hll = "-WRONGTYPE Key is not a valid HyperLogLog string value.\r\n";
  CHECK(h.Cmd("SET s x") == Ok());
  CHECK(h.Cmd("PFADD s a") == not_hll);
  CHECK(h.Cmd("PFCOUNT h s") == not_hll);
  CHECK(h.Cmd("PFMERGE m s") == not_hll);
  CHECK(h.Cmd("LPUSH l x") == Int(1));
  CHECK(h.Cmd("PFCOUNT l") == WrongTypeErr());
  // A stale cached count over one ZERO opcode (1 of 16384 registers): corrupt.
  CHECK(h.Run({"SET", "bad",
               std::string("HYLL\x01", 5) + std::string(10, '\0') + "\x80" +
                   std::string(1, '\0')}) == Ok());
  CHECK(h.Cmd("PFCOUNT bad") == "-INVALIDOBJ Corrupted HLL object detected\r\n");
  CHECK(h.Cmd("PFADD bad x") == "-INVALIDOBJ Corrupted HLL object detected\r\n");
  CHECK(h.Cmd("PFCOUNT") == ArityErr("pfcount"));
}

TEST_CASE("LCS: types first, then options") {
  Harness h;
  CHECK(h.Cmd("MSET a ohmytext b mynewtext") == Ok());
  CHECK(h.Cmd("LCS a b") == Bulk("mytext"));
  CHECK(h.Cmd("LCS a b LEN") == Int(6));
  CHECK(h.Cmd("LCS a b IDX MINMATCHLEN 4 WITHMATCHLEN") ==
        Arr({Bulk("matches"), Arr({Arr({Arr({Int(4), Int(7)}), Arr({Int(5), Int(8)}), Int(4)})}),
             Bulk("len"), Int(6)}));
  CHECK(h.Cmd("LCS a b LEN IDX") ==
        Err("ERR If you want both the length and indexes, please just use IDX."));
  CHECK(h.Cmd("LCS a b MINMATCHLEN") == SyntaxErr());
  CHECK(h.Cmd("LCS a b MINMATCHLEN x") == NotIntegerErr());
  CHECK(h.Cmd("LPUSH l x") == Int(1));
  CHECK(h.Cmd("LCS a l FOO") == Err("ERR The specified keys must contain string values"));
  CHECK(h.Cmd("LCS nokey nokey2") == Bulk(""));
}

}  // namespace sluice::server::testing

namespace sluice::server::testing {

TEST_CASE("COMMAND INFO: the bitmap and hyperloglog ACL categories") {
  Harness h;
  CHECK(h.Cmd("COMMAND INFO setbit").find("+@bitmap\r\n") != std::string::npos);
  CHECK(h.Cmd("COMMAND INFO pfcount").find("+@hyperloglog\r\n") != std::string::npos);
  CHECK(h.Cmd("COMMAND INFO lcs").find("+@string\r\n") != std::string::npos);
}

}  // namespace sluice::server::testing
