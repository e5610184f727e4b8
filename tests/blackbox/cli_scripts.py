"""redis-cli scripts for test_cli.py: every string, key and server command.

Each entry: name -> (commands, one per line, run through ONE redis-cli process on a flushed
server; redis-cli's expected --no-raw output). The expected texts were produced by Redis 7.0.15
itself (SLUICE_TARGET=redis runs the same scripts against redis-server).
"""

# name: (commands, one per line; redis-cli's expected output)
SCRIPTS = {
    'ping_echo': (r'''
PING
PING "hello there"
ECHO "a b"
ECHO
PING a b''', r'''
PONG
"hello there"
"a b"
(error) ERR wrong number of arguments for 'echo' command
(error) ERR wrong number of arguments for 'ping' command'''),
    'get_set': (r'''
SET k v
GET k
GET missing
SET k v2 XX
GET k
SET k v3 NX
SET n1 v NX
SET k v4 GET
SET missing2 v GET
SET k v EX 100
TTL k
SET k v PX 100000
TTL k
SET k v EXAT 4102444800
EXPIRETIME k
SET k v PXAT 4102444800123
PEXPIRETIME k
SET k v5 KEEPTTL
PEXPIRETIME k
SET k v6
TTL k
SET k v EX 0
SET k v EX -1
SET k v PX 0
SET k v EX 9223372036854775807
SET k v PX 9223372036854775807
SET k v EXAT 9223372036854775807
SET k v EX abc
SET k v EX
SET k v NX XX
SET k v EX 10 PX 100
SET k v KEEPTTL EX 10
SET k v FOO
SET k''', r'''
OK
"v"
(nil)
OK
"v2"
(nil)
OK
"v2"
(nil)
OK
(integer) 100
OK
(integer) 100
OK
(integer) 4102444800
OK
(integer) 4102444800123
OK
(integer) 4102444800123
OK
(integer) -1
(error) ERR invalid expire time in 'set' command
(error) ERR invalid expire time in 'set' command
(error) ERR invalid expire time in 'set' command
(error) ERR invalid expire time in 'set' command
(error) ERR invalid expire time in 'set' command
(error) ERR invalid expire time in 'set' command
(error) ERR value is not an integer or out of range
(error) ERR syntax error
(error) ERR syntax error
(error) ERR syntax error
(error) ERR syntax error
(error) ERR syntax error
(error) ERR wrong number of arguments for 'set' command'''),
    'setnx_setex_psetex_getset': (r'''
SETNX nx 1
SETNX nx 2
GET nx
SETEX ex 100 val
TTL ex
GET ex
SETEX ex 0 val
SETEX ex -5 val
SETEX ex abc val
PSETEX px 100000 val
TTL px
PSETEX px 0 val
GETSET nx new
GET nx
GETSET nothere x
GET nothere
SETEX ex 100''', r'''
(integer) 1
(integer) 0
"1"
OK
(integer) 100
"val"
(error) ERR invalid expire time in 'setex' command
(error) ERR invalid expire time in 'setex' command
(error) ERR value is not an integer or out of range
OK
(integer) 100
(error) ERR invalid expire time in 'psetex' command
"1"
"new"
(nil)
"x"
(error) ERR wrong number of arguments for 'setex' command'''),
    'getdel_getex': (r'''
SET g v EX 100
GETDEL g
GETDEL g
EXISTS g
SET g v
GETEX g
TTL g
GETEX g EX 100
TTL g
GETEX g PERSIST
TTL g
GETEX g PX 200000
TTL g
GETEX g EXAT 4102444800
EXPIRETIME g
GETEX g PXAT 4102444800000
EXPIRETIME g
GETEX missing EX 10
GETEX g EX 0
GETEX g EX 10 PX 10
GETEX g FOO
GETEX g EX''', r'''
OK
"v"
(nil)
(integer) 0
OK
"v"
(integer) -1
"v"
(integer) 100
"v"
(integer) -1
"v"
(integer) 200
"v"
(integer) 4102444800
"v"
(integer) 4102444800
(nil)
(error) ERR invalid expire time in 'getex' command
(error) ERR syntax error
(error) ERR syntax error
(error) ERR syntax error'''),
    'mget_mset': (r'''
MSET a 1 b 2 c 3
MGET a b c missing
MSET a
MSET a 1 b
MSETNX a 9 d 4
MGET a d
MSETNX d 4 e 5
MGET d e
MSETNX f
MGET''', r'''
OK
1) "1"
2) "2"
3) "3"
4) (nil)
(error) ERR wrong number of arguments for 'mset' command
(error) ERR wrong number of arguments for 'mset' command
(integer) 0
1) "1"
2) (nil)
(integer) 1
1) "4"
2) "5"
(error) ERR wrong number of arguments for 'msetnx' command
(error) ERR wrong number of arguments for 'mget' command'''),
    'incr_decr': (r'''
INCR i
INCR i
INCRBY i 10
DECR i
DECRBY i 5
INCRBY i -3
DECRBY i -3
GET i
SET i " 1"
INCR i
SET i "1 "
INCR i
SET i 9223372036854775807
INCR i
INCRBY i 0
SET i -9223372036854775808
DECR i
DECRBY i 1
SET i 0
DECRBY i -9223372036854775808
INCRBY i abc
INCRBY i 1.5
INCRBY i 99999999999999999999
SET i abc
INCR i
SET i 0012
INCR i
SET i +5
INCR i
SET i -0
INCR i
INCR''', r'''
(integer) 1
(integer) 2
(integer) 12
(integer) 11
(integer) 6
(integer) 3
(integer) 6
"6"
OK
(error) ERR value is not an integer or out of range
OK
(error) ERR value is not an integer or out of range
OK
(error) ERR increment or decrement would overflow
(integer) 9223372036854775807
OK
(error) ERR increment or decrement would overflow
(error) ERR increment or decrement would overflow
OK
(error) ERR decrement would overflow
(error) ERR value is not an integer or out of range
(error) ERR value is not an integer or out of range
(error) ERR value is not an integer or out of range
OK
(error) ERR value is not an integer or out of range
OK
(error) ERR value is not an integer or out of range
OK
(error) ERR value is not an integer or out of range
OK
(error) ERR value is not an integer or out of range
(error) ERR wrong number of arguments for 'incr' command'''),
    'incrbyfloat': (r'''
SET f 10.50
INCRBYFLOAT f 0.1
INCRBYFLOAT f -5
INCRBYFLOAT f 5.0e3
INCRBYFLOAT new 3
INCRBYFLOAT new 1.5
INCRBYFLOAT f nan
INCRBYFLOAT f inf
INCRBYFLOAT f -inf
INCRBYFLOAT f abc
INCRBYFLOAT f " 1"
SET f 1e400
INCRBYFLOAT f 1
SET f abc
INCRBYFLOAT f 1
SET f 3.0
INCRBYFLOAT f 0
SET f 5
INCRBYFLOAT f 1.7976931348623157e308
INCRBYFLOAT f 1.5e-5
INCRBYFLOAT f''', r'''
OK
"10.6"
"5.6"
"5005.60000000000000009"
"3"
"4.5"
(error) ERR value is not a valid float
(error) ERR increment would produce NaN or Infinity
(error) ERR increment would produce NaN or Infinity
(error) ERR value is not a valid float
(error) ERR value is not a valid float
OK
"10000000000000000000281880683947586514586453433629052038625910693539685534008629862039363994848324160522094053927317616200295822777259255734023828976593340661017797447434546173917862448116674971723778943824391593338047470675026246684401359237513603830343735485505244955964979021825038280091068414947402456898653040951017512658092615827588920183472511643316591362664138176309734806343732497430221946880"
OK
(error) ERR value is not a valid float
OK
"3"
OK
"179769313486231569995921046774104434048386446944329178485314420765176628523124396354701868608387085564428793419425520689308708363451136055357897278026477617073498977686288394835618163294045594434929537447290627480669417384648879122776218333598953852832103282504751611691208117720159985926376802466863339536384"
"179769313486231569995921046774104434048386446944329178485314420765176628523124396354701868608387085564428793419425520689308708363451136055357897278026477617073498977686288394835618163294045594434929537447290627480669417384648879122776218333598953852832103282504751611691208117720159985926376802466863339536384"
(error) ERR wrong number of arguments for 'incrbyfloat' command'''),
    'append_strlen_ranges': (r'''
APPEND s Hello
APPEND s " World"
GET s
STRLEN s
STRLEN missing
GETRANGE s 0 4
GETRANGE s -5 -1
GETRANGE s 0 -1
GETRANGE s 5 1
GETRANGE s 100 200
GETRANGE s -100 2
GETRANGE missing 0 10
GETRANGE s a 1
SETRANGE s 6 Redis
GET s
SETRANGE pad 5 x
GET pad
SETRANGE s -1 x
SETRANGE s 0 ""
SETRANGE nope 3 ""
EXISTS nope
SETRANGE s 536870912 x
SETRANGE s abc x''', r'''
(integer) 5
(integer) 11
"Hello World"
(integer) 11
(integer) 0
"Hello"
"World"
"Hello World"
""
""
"Hel"
""
(error) ERR value is not an integer or out of range
(integer) 11
"Hello Redis"
(integer) 6
"\x00\x00\x00\x00\x00x"
(error) ERR offset is out of range
(integer) 11
(integer) 0
(integer) 0
(error) ERR string exceeds maximum allowed size (proto-max-bulk-len)
(error) ERR value is not an integer or out of range'''),
    'del_exists_unlink': (r'''
MSET a 1 b 2 c 3
EXISTS a b missing a
DEL a missing
DEL a
UNLINK b c d
EXISTS a b c
DEL''', r'''
OK
(integer) 3
(integer) 1
(integer) 0
(integer) 2
(integer) 0
(error) ERR wrong number of arguments for 'del' command'''),
    'expire_family': (r'''
SET k v
EXPIRE k 100
TTL k
EXPIRE k 200 NX
EXPIRE k 200 XX
TTL k
EXPIRE k 100 GT
EXPIRE k 300 GT
TTL k
EXPIRE k 400 LT
EXPIRE k 150 LT
TTL k
PERSIST k
PERSIST k
TTL k
EXPIRE k 100 NX
EXPIRE k 100 NX XX
EXPIRE k 100 GT LT
EXPIRE k 100 FOO
EXPIRE k abc
EXPIRE missing 100
TTL missing
PTTL missing
EXPIRETIME missing
PEXPIRETIME missing
PEXPIRE k 500000
TTL k
EXPIREAT k 4102444800
EXPIRETIME k
PEXPIREAT k 4102444800500
PEXPIRETIME k
EXPIRETIME k
SET p v
EXPIRETIME p
PEXPIRETIME p
TTL p
PTTL p
EXPIRE k 9223372036854775807
PEXPIRE k 9223372036854775807
EXPIREAT k 9223372036854775807
EXPIRE k -9223372036854775808
EXPIRE k 0
EXISTS k
SET k v
EXPIRE k -10
EXISTS k
SET k v
PEXPIREAT k 1
GET k
SET k v
EXPIREAT k 100 GT
TTL k''', r'''
OK
(integer) 1
(integer) 100
(integer) 0
(integer) 1
(integer) 200
(integer) 0
(integer) 1
(integer) 300
(integer) 0
(integer) 1
(integer) 150
(integer) 1
(integer) 0
(integer) -1
(integer) 1
(error) ERR NX and XX, GT or LT options at the same time are not compatible
(error) ERR GT and LT options at the same time are not compatible
(error) ERR Unsupported option FOO
(error) ERR value is not an integer or out of range
(integer) 0
(integer) -2
(integer) -2
(integer) -2
(integer) -2
(integer) 1
(integer) 500
(integer) 1
(integer) 4102444800
(integer) 1
(integer) 4102444800500
(integer) 4102444801
OK
(integer) -1
(integer) -1
(integer) -1
(integer) -1
(error) ERR invalid expire time in 'expire' command
(error) ERR invalid expire time in 'pexpire' command
(error) ERR invalid expire time in 'expireat' command
(error) ERR invalid expire time in 'expire' command
(integer) 1
(integer) 0
OK
(integer) 1
(integer) 0
OK
(integer) 1
(nil)
OK
(integer) 0
(integer) -1'''),
    'type_rename_copy': (r'''
SET s v
TYPE s
TYPE missing
RENAME s t
GET t
RENAME missing x
RENAME t t
RENAMENX t t
SET u other
RENAMENX t u
RENAMENX t v
GET v
SET e val EX 100
RENAME e e2
TTL e2
COPY v w
GET w
COPY v w
COPY v w REPLACE
COPY missing z
COPY v v
COPY v w DB 1
SELECT 1
GET w
SELECT 0
COPY v w DB 16
COPY v w FOO
COPY e2 e3
TTL e3''', r'''
OK
string
none
OK
"v"
(error) ERR no such key
OK
(integer) 0
OK
(integer) 0
(integer) 1
"v"
OK
OK
(integer) 100
(integer) 1
"v"
(integer) 0
(integer) 1
(integer) 0
(error) ERR source and destination objects are the same
(integer) 1
OK
"v"
OK
(error) ERR DB index is out of range
(error) ERR syntax error
(integer) 1
(integer) 100'''),
    'keys_randomkey': (r'''
RANDOMKEY
SET user:1 a
KEYS user:*
KEYS *
RANDOMKEY
KEYS nomatch*
SET "we ird" x
KEYS we?ird
KEYS w[e]*''', r'''
(nil)
OK
1) "user:1"
1) "user:1"
"user:1"
(empty array)
OK
1) "we ird"
1) "we ird"'''),
    'server_misc': (r'''
DBSIZE
SET a 1
DBSIZE
SELECT 1
DBSIZE
FLUSHDB
SELECT 0
DBSIZE
FLUSHALL
DBSIZE
FLUSHALL ASYNC
FLUSHDB SYNC
FLUSHDB FOO
SELECT 16''', r'''
(integer) 0
OK
(integer) 1
OK
(integer) 0
OK
OK
(integer) 1
OK
(integer) 0
OK
OK
(error) ERR syntax error
(error) ERR DB index is out of range'''),
    'client': (r'''
CLIENT SETNAME bb-cli
CLIENT GETNAME
CLIENT SETNAME "has space"
CLIENT SETNAME ""
CLIENT GETNAME
CLIENT KILL 127.0.0.1:1
CLIENT KILL ID 999999
CLIENT FOO''', r'''
OK
"bb-cli"
(error) ERR Client names cannot contain spaces, newlines or special characters.
OK
(nil)
(error) ERR No such client
(integer) 0
(error) ERR unknown subcommand 'FOO'. Try CLIENT HELP.'''),
    'config': (r'''
CONFIG GET maxclients
CONFIG GET timeout
CONFIG SET timeout 100
CONFIG GET timeout
CONFIG SET timeout 0
CONFIG SET timeout abc
CONFIG SET nosuchoption 1
CONFIG GET nosuchoption
CONFIG RESETSTAT
CONFIG GET
CONFIG FOO''', r'''
1) "maxclients"
2) "10000"
1) "timeout"
2) "0"
OK
1) "timeout"
2) "100"
OK
(error) ERR CONFIG SET failed (possibly related to argument 'timeout') - argument couldn't be parsed into an integer
(error) ERR Unknown option or number of arguments for CONFIG SET - 'nosuchoption'
(empty array)
OK
(error) ERR wrong number of arguments for 'config|get' command
(error) ERR unknown subcommand 'FOO'. Try CONFIG HELP.'''),
    'config_active_expire_effort': (r'''
CONFIG GET active-expire-effort
CONFIG SET active-expire-effort 10
CONFIG GET active-expire-effort
CONFIG SET active-expire-effort 11
CONFIG SET active-expire-effort 0
CONFIG SET active-expire-effort abc
CONFIG SET active-expire-effort 1
CONFIG GET active-expire-effort''', r'''
1) "active-expire-effort"
2) "1"
OK
1) "active-expire-effort"
2) "10"
(error) ERR CONFIG SET failed (possibly related to argument 'active-expire-effort') - argument must be between 1 and 10 inclusive
(error) ERR CONFIG SET failed (possibly related to argument 'active-expire-effort') - argument must be between 1 and 10 inclusive
(error) ERR CONFIG SET failed (possibly related to argument 'active-expire-effort') - argument couldn't be parsed into an integer
OK
1) "active-expire-effort"
2) "1"'''),
    'wrong_type_and_unknown': (r'''
NOSUCHCOMMAND a b
nosuch
GET
CLIENT
CONFIG
COMMAND FOO''', r'''
(error) ERR unknown command 'NOSUCHCOMMAND', with args beginning with: 'a' 'b' 
(error) ERR unknown command 'nosuch', with args beginning with: 
(error) ERR wrong number of arguments for 'get' command
(error) ERR wrong number of arguments for 'client' command
(error) ERR wrong number of arguments for 'config' command
(error) ERR unknown subcommand 'FOO'. Try COMMAND HELP.'''),
}
