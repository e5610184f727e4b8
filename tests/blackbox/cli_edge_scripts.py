"""redis-cli scripts for test_cli.py: edge cases (number parsing, expiry limits, ranges, duplicates, SCAN, connection).

Each entry: name -> (commands, one per line, run through ONE redis-cli process on a flushed
server; redis-cli's expected --no-raw output). The expected texts were produced by Redis 7.0.15
itself (SLUICE_TARGET=redis runs the same scripts against redis-server).
"""

EDGE_SCRIPTS = {
    'number_edges': (r'''
SET k "  5"
INCR k
SET k 5
INCRBY k " 1"
INCRBY k "1 "
INCRBY k +1
INCRBY k -0
INCRBY k 007
INCRBY k 0x10
INCRBY k ""
INCRBY k 9223372036854775808
DECRBY k -9223372036854775807
SET f 1.5
INCRBYFLOAT f 1e5
INCRBYFLOAT f .5
INCRBYFLOAT f 5.
INCRBYFLOAT f -0
INCRBYFLOAT f 0x10
INCRBYFLOAT f 1e-400
INCRBYFLOAT f ""
INCRBYFLOAT f "1 "
SET f 1.5e308
INCRBYFLOAT f 1.5e308
SET f inf
INCRBYFLOAT f 1
SET f 1
INCRBYFLOAT f 1e4933
INCRBYFLOAT f -1.25
INCRBYFLOAT f 0.1
INCRBYFLOAT f -0.1
SET f 0.1
INCRBYFLOAT f 0.2
SET f 3
INCRBYFLOAT f -3
SET f 1.10
APPEND f 0
INCRBYFLOAT f 0''', r'''
OK
(error) ERR value is not an integer or out of range
OK
(error) ERR value is not an integer or out of range
(error) ERR value is not an integer or out of range
(error) ERR value is not an integer or out of range
(error) ERR value is not an integer or out of range
(error) ERR value is not an integer or out of range
(error) ERR value is not an integer or out of range
(error) ERR value is not an integer or out of range
(error) ERR value is not an integer or out of range
(error) ERR increment or decrement would overflow
OK
"100001.5"
"100002"
"100007"
"100007"
"100023"
"100023"
(error) ERR value is not a valid float
(error) ERR value is not a valid float
OK
"299999999999999999999802952978936936062033681930121889934267370842360212133382092073513329456432044063805856741044049928681709165013290418975721613155792350350455287355122225755520606513477793033688249842856870392034430282663023473578541488576654642706081008486842868180099693230377808905266593729023699845120"
OK
(error) ERR increment would produce NaN or Infinity
OK
(error) ERR value is not a valid float
"-0.25"
"-0.15"
"-0.25"
OK
"0.3"
OK
"0"
OK
(integer) 5
"1.1"'''),
    'expire_edges': (r'''
SET k v
EXPIRE k 9223372036854775
EXPIRE k 9223372036854774
PEXPIRE k 9223372036854775807
PEXPIREAT k 9223372036854775807
EXPIREAT k 9223372036854775
SET k v EX 9223372036854775
SET k v EX 9223372036854774
SET k v PX 9223372036854775000
SETEX k 9223372036854775 v
PSETEX k -1 v
GETEX k EX 9223372036854775
GETEX k PX -1
GETEX k EXAT 0
GETEX k PXAT -1
SET k v EXAT 1
EXISTS k
SET k v
GETEX k PXAT 1
EXISTS k
SET k v
EXPIRE k 100 XX GT
TTL k
EXPIRE k 50 LT XX
TTL k
PEXPIRE k 0 LT
EXISTS k''', r'''
OK
(error) ERR invalid expire time in 'expire' command
(error) ERR invalid expire time in 'expire' command
(error) ERR invalid expire time in 'pexpire' command
(integer) 1
(integer) 1
(error) ERR invalid expire time in 'set' command
(error) ERR invalid expire time in 'set' command
(error) ERR invalid expire time in 'set' command
(error) ERR invalid expire time in 'setex' command
(error) ERR invalid expire time in 'psetex' command
(error) ERR invalid expire time in 'getex' command
(error) ERR invalid expire time in 'getex' command
(error) ERR invalid expire time in 'getex' command
(error) ERR invalid expire time in 'getex' command
OK
(integer) 0
OK
"v"
(integer) 0
OK
(integer) 0
(integer) -1
(integer) 0
(integer) -1
(integer) 1
(integer) 0'''),
    'range_edges': (r'''
SET s Hello
GETRANGE s -9223372036854775808 9223372036854775807
GETRANGE s 9223372036854775807 -9223372036854775808
GETRANGE s 0 0
GETRANGE s -1 -5
GETRANGE s 1 -1
SETRANGE s 9223372036854775807 x
SETRANGE s 536870912 ""
SETRANGE s 536870911 ""
SETRANGE s 7 ""
SETRANGE s 2 ""
GET s
SETRANGE s 0 HELLO_WORLD
GET s
SET e ""
STRLEN e
GETRANGE e 0 -1
GETRANGE e 0 0
APPEND e ""
EXISTS e
APPEND z ""
EXISTS z
SETRANGE new 0 abc
GET new''', r'''
OK
"Hello"
""
"H"
""
"ello"
(error) ERR string exceeds maximum allowed size (proto-max-bulk-len)
(integer) 5
(integer) 5
(integer) 5
(integer) 5
"Hello"
(integer) 11
"HELLO_WORLD"
OK
(integer) 0
""
""
(integer) 0
(integer) 1
(integer) 0
(integer) 1
(integer) 3
"abc"'''),
    'multi_key_dups': (r'''
MSET a 1 a 2
GET a
MSETNX x 1 x 2
GET x
DEL a a x
MSET a 1 b 2
UNLINK a a b
MGET a a
COPY missing y REPLACE
SET a 1
COPY a b DB 0
COPY a b DB abc
COPY a b REPLACE DB 1 REPLACE
RENAMENX a a
SET c 3
RENAME a c
GET c
EXISTS a''', r'''
OK
"2"
(integer) 1
"2"
(integer) 2
OK
(integer) 2
1) (nil)
2) (nil)
(integer) 0
OK
(integer) 1
(error) ERR value is not an integer or out of range
(integer) 1
(integer) 0
OK
OK
"1"
(integer) 0'''),
    'scan_keys': (r'''
MSET a 1 b 2 c 3
SCAN abc
SCAN 0 COUNT 0
SCAN 0 COUNT -1
SCAN 0 COUNT x
SCAN 0 MATCH
SCAN 0 FOO bar
SCAN 0 MATCH a COUNT 100
SCAN 0 MATCH nope COUNT 100
SCAN 0 TYPE hash COUNT 100
SCAN 0 TYPE string MATCH b COUNT 100
KEYS [a]
KEYS [c]
DEL a b c
KEYS *
SCAN 0
SET "a*b" 1
SET "axb" 2
KEYS a\*b
KEYS a[x]b''', r'''
OK
(error) ERR invalid cursor
(error) ERR syntax error
(error) ERR syntax error
(error) ERR value is not an integer or out of range
(error) ERR syntax error
(error) ERR syntax error
1) "0"
2) 1) "a"
1) "0"
2) (empty array)
1) "0"
2) (empty array)
1) "0"
2) 1) "b"
1) "a"
1) "c"
(integer) 3
(empty array)
1) "0"
2) (empty array)
OK
OK
1) "a*b"
1) "axb"'''),
    'connection_misc': (r'''
ECHO ""
PING ""
CLIENT SETNAME
CLIENT SETNAME a b
CLIENT SETNAME "a\nb"
CLIENT GETNAME x
CLIENT ID x
CLIENT KILL
CLIENT KILL ID abc
CLIENT KILL ID 0
CLIENT KILL FOO bar
HELLO 3 SETNAME "bad name"
SELECT " 1"
SELECT 1.0
DBSIZE x
FLUSHALL FOO
TIME x''', r'''
""
""
(error) ERR wrong number of arguments for 'client|setname' command
(error) ERR wrong number of arguments for 'client|setname' command
(error) ERR Client names cannot contain spaces, newlines or special characters.
(error) ERR wrong number of arguments for 'client|getname' command
(error) ERR wrong number of arguments for 'client|id' command
(error) ERR wrong number of arguments for 'client|kill' command
(error) ERR client-id should be greater than 0
(error) ERR client-id should be greater than 0
(error) ERR syntax error
(error) ERR Client names cannot contain spaces, newlines or special characters.
(error) ERR value is not an integer or out of range
(error) ERR value is not an integer or out of range
(error) ERR wrong number of arguments for 'dbsize' command
(error) ERR syntax error
(error) ERR wrong number of arguments for 'time' command'''),
}
