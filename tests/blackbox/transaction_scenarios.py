"""The command sequences test_transactions.DifferentialTest sends to Sluice and to a real
redis-server 7.0.15; every reply of every step must be Redis's, byte for byte, in RESP2 and
RESP3. A step may also carry the exact reply expected (asserted on both servers), so the
expectation is visible here and proven to be Redis's."""

# ---------------------------------------------------------------------------------------------
# Scenario steps
# ---------------------------------------------------------------------------------------------

class Step:
    """One step of a scenario. kind: 'cmd' (reply compared), 'wait' (time passes), 'quit'
    (QUIT, then everything until the server closes the connection, compared), 'setup' (a
    different command on each server, reply not compared). Every connection of a RESP3 run
    starts with HELLO 3, whose reply (it names the server) is not compared."""

    def __init__(self, kind, args=(), conn=0, ms=0, expect=None):
        self.kind, self.args, self.conn, self.ms, self.expect = kind, args, conn, ms, expect


def C(*args, expect=None):
    """A command on the scenario's main connection. expect: the exact raw reply, or a dict
    {2: raw, 3: raw} by protocol, asserted on both servers besides their equality."""
    return Step("cmd", args, expect=expect)


def Other(*args):
    """A command on a second connection (another client)."""
    return Step("cmd", args, conn=1)


def Wait(ms):
    """ms of time pass: DEBUG CLOCK ADVANCE on Sluice, a real sleep on Redis (so scenarios leave
    a margin: a key set with PX 600 is looked at after Wait(800))."""
    return Step("wait", ms=ms)


def Quit(conn=0):
    return Step("quit", conn=conn)


def Setup(redis_args, sluice_args):
    """A command that differs between the servers (reply not compared): e.g. making a key of a
    non-string type, LPUSH on Redis, a limiter of its own kind on Sluice."""
    return Step("setup", (redis_args, sluice_args))


# A key holding another type than string on each server.
OTHER_TYPE = Setup(("RPUSH", "other", "x"), ("LEAKY.TAKE", "other", "1", "1s"))


OK = b"+OK\r\n"
QUEUED = b"+QUEUED\r\n"
NIL_EXEC = {2: b"*-1\r\n", 3: b"_\r\n"}

SCENARIOS = {
    "queued": [
        C("MULTI", expect=OK), C("SET", "a", "1", expect=QUEUED), C("INCR", "a", expect=QUEUED),
        C("GET", "a", expect=QUEUED), C("MGET", "a", "nope"),
        C("EXEC", expect={2: b"*4\r\n+OK\r\n:2\r\n$1\r\n2\r\n*2\r\n$1\r\n2\r\n$-1\r\n",
                          3: b"*4\r\n+OK\r\n:2\r\n$1\r\n2\r\n*2\r\n$1\r\n2\r\n_\r\n"}),
        C("GET", "a"),
    ],
    "unknown_command_aborts": [
        C("MULTI"), C("SET", "a", "1"), C("NOSUCHCOMMAND", "x", "y"), C("SET", "b", "2"),
        C("EXEC", expect=b"-EXECABORT Transaction discarded because of previous errors.\r\n"),
        C("EXISTS", "a", "b", expect=b":0\r\n"), C("EXEC"),
    ],
    "bad_arity_aborts": [
        C("MULTI"), C("SET", "a", "1"), C("GET"), C("SET", "b"), C("CLIENT"), C("EXEC"),
        C("EXISTS", "a"),
    ],
    "unknown_subcommand_aborts": [
        C("MULTI"), C("SET", "a", "1"), C("CONFIG", "NOSUCH"), C("EXEC"), C("EXISTS", "a"),
    ],
    "no_multi_command_aborts": [
        C("MULTI"), C("SET", "a", "1"),
        C("SHUTDOWN", expect=b"-ERR Command not allowed inside a transaction\r\n"),
        C("EXEC"), C("EXISTS", "a"), C("PING"),
    ],
    "runtime_errors_do_not_roll_back": [
        C("SET", "s", "abc"), C("MULTI"), C("SET", "a", "1"), C("INCR", "s"),
        C("INCRBY", "a", "notanumber"), C("SET", "b", "2", "EX", "0"), C("SET", "c", "3"),
        C("APPEND", "s", "def"), C("EXEC"), C("MGET", "a", "b", "c", "s"),
    ],
    "wrongtype_inside_exec_does_not_roll_back": [
        OTHER_TYPE, C("MULTI"), C("SET", "a", "1"), C("GET", "other"), C("APPEND", "other", "x"),
        C("INCR", "other"), C("GETRANGE", "other", "0", "1"), C("STRLEN", "other"),
        C("MGET", "a", "other"), C("INCR", "a"), C("EXISTS", "other"), C("SET", "other", "s"),
        C("GET", "other"),
        C("EXEC", expect={
            2: b"*11\r\n+OK\r\n" + b"-WRONGTYPE Operation against a key holding the wrong kind "
               b"of value\r\n" * 5 + b"*2\r\n$1\r\n1\r\n$-1\r\n:2\r\n:1\r\n+OK\r\n$1\r\ns\r\n",
            3: b"*11\r\n+OK\r\n" + b"-WRONGTYPE Operation against a key holding the wrong kind "
               b"of value\r\n" * 5 + b"*2\r\n$1\r\n1\r\n_\r\n:2\r\n:1\r\n+OK\r\n$1\r\ns\r\n"}),
        C("MGET", "a", "other"),
    ],
    "nested_multi": [
        C("MULTI"), C("SET", "a", "1"), C("MULTI", expect=b"-ERR MULTI calls can not be nested\r\n"),
        C("INCR", "a"), C("EXEC"), C("GET", "a"),
    ],
    "exec_discard_without_multi": [
        C("EXEC", expect=b"-ERR EXEC without MULTI\r\n"),
        C("DISCARD", expect=b"-ERR DISCARD without MULTI\r\n"),
        C("MULTI"), C("SET", "a", "1"), C("DISCARD", expect=OK), C("EXISTS", "a"),
        C("EXEC"), C("DISCARD"),
    ],
    "watch_inside_multi": [
        C("MULTI"), C("SET", "a", "1"),
        C("WATCH", "a", expect=b"-ERR WATCH inside MULTI is not allowed\r\n"),
        C("EXEC"), C("GET", "a"),
    ],
    "unwatch_queued": [
        C("MULTI"), C("UNWATCH", expect=QUEUED), C("SET", "a", "1"), C("UNWATCH"), C("EXEC"),
    ],
    "arity_outside_multi": [
        C("MULTI", "x"), C("DISCARD", "x"), C("WATCH"), C("UNWATCH", "x"),
        C("EXEC", "x", expect=b"-EXECABORT Transaction discarded because of: wrong number of "
                              b"arguments for 'exec' command\r\n"),
    ],
    "arity_inside_multi": [
        C("MULTI"), C("SET", "a", "1"), C("MULTI", "x"), C("WATCH"), C("UNWATCH", "x"),
        C("DISCARD", "x"), C("EXEC", "x"), C("EXEC"), C("EXISTS", "a"),
    ],
    "arity_inside_multi_discard_still_works": [
        C("MULTI"), C("SET", "a", "1"), C("UNWATCH", "x"), C("DISCARD"), C("EXEC"),
    ],
    "select_inside_multi": [
        C("MULTI"), C("SELECT", "1"), C("SET", "a", "db1"), C("SELECT", "0"), C("SET", "a", "db0"),
        C("SELECT", "2"), C("EXEC"), C("GET", "a"), C("SELECT", "1"), C("GET", "a"), C("SELECT", "0"),
        C("GET", "a"), C("MULTI"), C("SELECT", "99"), C("GET", "a"), C("EXEC"), C("GET", "a"),
    ],
    "expire_0_then_get": [
        C("SET", "e", "v"), C("MULTI"), C("EXPIRE", "e", "0"), C("GET", "e"), C("EXISTS", "e"),
        C("EXEC"), C("EXISTS", "e"),
    ],
    "flushdb_then_set_then_keys": [
        C("SET", "old1", "1"), C("SET", "old2", "2"), C("MULTI"), C("FLUSHDB"), C("SET", "f", "1"),
        C("KEYS", "*"), C("DBSIZE"), C("EXEC"), C("KEYS", "*"),
    ],
    "read_own_writes": [
        C("MULTI"), C("SET", "k", "1"), C("APPEND", "k", "23"), C("GETRANGE", "k", "0", "-1"),
        C("RENAME", "k", "k2"), C("EXISTS", "k"), C("GET", "k2"), C("DEL", "k2"), C("GET", "k2"),
        C("MSET", "m1", "a", "m2", "b"), C("MGET", "m1", "m2", "m3"), C("EXEC"),
    ],
    "empty_exec": [
        C("MULTI"), C("EXEC", expect=b"*0\r\n"), C("EXEC"),
    ],
    "reset_inside_multi": [
        C("SET", "a", "0"), C("WATCH", "a"), C("MULTI"), C("INCR", "a"), C("SELECT", "1"),
        C("RESET", expect=b"+RESET\r\n"), C("EXEC"), C("GET", "a"), Other("SET", "a", "5"),
        C("MULTI"), C("INCR", "a"), C("EXEC"),
    ],
    "quit_inside_multi": [
        C("MULTI"), C("SET", "q", "1"), Quit(), C("EXISTS", "q"), C("EXEC"),
    ],
    "exec_after_discard_and_multi_again": [
        C("MULTI"), C("SET", "a", "1"), C("DISCARD"), C("MULTI"), C("SET", "b", "2"), C("EXEC"),
        C("MGET", "a", "b"),
    ],
    "copy_to_another_db_inside_exec": [
        C("SET", "a", "1"), C("MULTI"), C("COPY", "a", "b", "DB", "1"), C("SET", "c", "2"),
        C("SELECT", "1"), C("GET", "b"), C("COPY", "b", "a", "DB", "0", "REPLACE"), C("EXEC"),
        C("GET", "b"), C("SELECT", "0"), C("MGET", "a", "b", "c"),
    ],
    "keyless_reads_see_own_writes": [
        C("SET", "old", "1"), C("MULTI"), C("FLUSHDB"), C("SET", "only", "1"), C("SCAN", "0"),
        C("RANDOMKEY"), C("DBSIZE"), C("DEL", "only"), C("RANDOMKEY"), C("KEYS", "*"),
        C("FLUSHALL"), C("SET", "x", "1"), C("EXEC"),
    ],
    "ttl_inside_exec": [
        C("MULTI"), C("SET", "k", "v", "EX", "100"), C("TTL", "k"), C("GETEX", "k", "PERSIST"),
        C("TTL", "k"), C("SET", "j", "v", "KEEPTTL", "GET"), C("PEXPIRE", "j", "-1"),
        C("EXISTS", "j"), C("EXEC"),
    ],
    "connection_commands_inside_exec": [
        C("MULTI"), C("PING"), C("ECHO", "hi"), C("CLIENT", "SETNAME", "txn"),
        C("CLIENT", "GETNAME"), C("AUTH", "pw"), C("EXEC"), C("CLIENT", "GETNAME"),
    ],
    "many_queued_commands": [C("MULTI")] + [C("INCR", "n")] * 500 + [C("EXEC"), C("GET", "n")],
    "discard_of_doomed_transaction": [
        C("MULTI"), C("NOSUCH"), C("DISCARD"), C("MULTI"), C("SET", "a", "1"), C("EXEC"),
    ],
    "exec_of_flushdb_with_watch_of_own_key": [
        C("SET", "k", "1"), C("WATCH", "k"), C("MULTI"), C("FLUSHDB"), C("SET", "k", "2"),
        C("EXEC"), C("GET", "k"),
    ],
    # WATCH
    "watch_untouched_runs": [
        C("SET", "k", "1"), C("WATCH", "k", "missing", expect=OK), Other("GET", "k"),
        Other("EXISTS", "missing"), C("MULTI"), C("INCR", "k"), C("EXEC"), C("GET", "k"),
    ],
    "watch_modified_by_another": [
        C("SET", "k", "1"), C("WATCH", "k"), Other("SET", "k", "2"), C("MULTI"), C("SET", "k", "3"),
        C("SET", "z", "1"), C("EXEC", expect=NIL_EXEC), C("MGET", "k", "z"),
    ],
    "watch_same_value_still_modified": [
        C("SET", "k", "1"), C("WATCH", "k"), Other("SET", "k", "1"), C("MULTI"), C("SET", "z", "1"),
        C("EXEC"), C("EXISTS", "z"),
    ],
    "watch_modified_by_same_connection": [
        C("SET", "k", "1"), C("WATCH", "k"), C("INCR", "k"), C("MULTI"), C("INCR", "k"),
        C("EXEC", expect=NIL_EXEC), C("GET", "k"),
    ],
    "watch_missing_key_created": [
        C("WATCH", "k"), Other("SET", "k", "x"), C("MULTI"), C("SET", "z", "1"), C("EXEC"),
        C("EXISTS", "z"),
    ],
    "watch_deleted": [
        C("SET", "k", "1"), C("WATCH", "k"), Other("DEL", "k"), C("MULTI"), C("SET", "z", "1"),
        C("EXEC", expect=NIL_EXEC), C("EXISTS", "z"),
    ],
    "watch_renamed_away_and_onto": [
        C("SET", "k", "1"), C("SET", "j", "2"), C("WATCH", "k"), Other("RENAME", "k", "k2"),
        C("MULTI"), C("SET", "z", "1"), C("EXEC"), C("WATCH", "j"), Other("RENAME", "k2", "j"),
        C("MULTI"), C("SET", "z", "1"), C("EXEC"), C("EXISTS", "z"),
    ],
    "watch_expire_set_by_another": [
        C("SET", "k", "1"), C("WATCH", "k"), Other("EXPIRE", "k", "100"), C("MULTI"),
        C("SET", "z", "1"), C("EXEC"), C("EXISTS", "z"),
    ],
    "watch_failed_write_is_not_a_modification": [
        C("SET", "k", "abc"), C("WATCH", "k"), Other("INCR", "k"), Other("SETNX", "k", "x"),
        Other("GET", "k"), C("MULTI"), C("SET", "z", "1"), C("EXEC"), C("EXISTS", "z"),
    ],
    "watch_other_db_is_another_key": [
        C("SET", "k", "1"), C("WATCH", "k"), Other("SELECT", "1"), Other("SET", "k", "2"),
        C("MULTI"), C("SET", "z", "1"), C("EXEC"), C("SELECT", "1"), C("WATCH", "k"),
        Other("SET", "k", "3"), C("MULTI"), C("SET", "z", "1"), C("EXEC"),
    ],
    "watch_expired_between_watch_and_exec": [
        C("SET", "k", "v", "PX", "600"), C("WATCH", "k"), Wait(800), C("MULTI"), C("SET", "z", "1"),
        C("EXEC", expect=NIL_EXEC), C("EXISTS", "z", "k"),
    ],
    "watch_ttl_not_reached_runs": [
        C("SET", "k", "v", "PX", "100000"), C("WATCH", "k"), C("MULTI"), C("SET", "z", "1"),
        C("EXEC"), C("EXISTS", "z", "k"),
    ],
    "watch_flushdb_existing_key_aborts": [
        C("SET", "k", "1"), C("WATCH", "k"), Other("FLUSHDB"), C("MULTI"), C("SET", "z", "1"),
        C("EXEC", expect=NIL_EXEC), C("EXISTS", "z"),
    ],
    "watch_flushall_existing_key_aborts": [
        C("SELECT", "3"), C("SET", "k", "1"), C("WATCH", "k"), Other("FLUSHALL"), C("MULTI"),
        C("SET", "z", "1"), C("EXEC"), C("EXISTS", "z"),
    ],
    "watch_flushdb_missing_key_runs": [
        C("SET", "other", "1"), C("WATCH", "k"), Other("FLUSHDB"), C("MULTI"), C("SET", "z", "1"),
        C("EXEC", expect=b"*1\r\n+OK\r\n"), C("EXISTS", "z"),
    ],
    "watch_flushdb_of_another_db_runs": [
        C("SET", "k", "1"), C("WATCH", "k"), Other("SELECT", "1"), Other("FLUSHDB"), C("MULTI"),
        C("SET", "z", "1"), C("EXEC"), C("EXISTS", "z"),
    ],
    "unwatch_clears": [
        C("SET", "k", "1"), C("WATCH", "k"), C("UNWATCH", expect=OK), Other("SET", "k", "2"),
        C("MULTI"), C("SET", "k", "3"), C("EXEC"), C("GET", "k"),
    ],
    "discard_clears_watches": [
        C("SET", "k", "1"), C("WATCH", "k"), C("MULTI"), C("DISCARD"), Other("SET", "k", "2"),
        C("MULTI"), C("SET", "k", "3"), C("EXEC"), C("GET", "k"),
    ],
    "exec_clears_watches": [
        C("WATCH", "k"), C("MULTI"), C("EXEC"), Other("SET", "k", "2"), C("MULTI"),
        C("SET", "k", "3"), C("EXEC"), C("GET", "k"),
    ],
    "aborted_exec_clears_watches": [
        C("WATCH", "k"), Other("SET", "k", "2"), C("MULTI"), C("EXEC"), Other("SET", "k", "4"),
        C("MULTI"), C("SET", "k", "3"), C("EXEC"), C("GET", "k"),
    ],
    "execabort_clears_watches": [
        C("WATCH", "k"), C("MULTI"), C("NOSUCH"), C("EXEC"), Other("SET", "k", "2"), C("MULTI"),
        C("SET", "k", "3"), C("EXEC"), C("GET", "k"),
    ],
    "exec_arity_clears_watches": [
        C("WATCH", "k"), C("EXEC", "x"), Other("SET", "k", "2"), C("MULTI"), C("SET", "k", "3"),
        C("EXEC"), C("GET", "k"),
    ],
    "watch_twice_and_several_keys": [
        C("WATCH", "a", "b", "a"), C("WATCH", "b", "c"), Other("SET", "c", "1"), C("MULTI"),
        C("SET", "z", "1"), C("EXEC"), C("WATCH", "a"), Other("DEL", "nothing"), C("MULTI"),
        C("SET", "z", "1"), C("EXEC"),
    ],
    "watch_queued_unwatch_does_not_save_exec": [
        C("SET", "k", "1"), C("WATCH", "k"), C("MULTI"), Other("SET", "k", "2"), C("UNWATCH"),
        C("SET", "z", "1"), C("EXEC"), C("EXISTS", "z"),
    ],
    "watch_key_written_by_anothers_exec": [
        C("WATCH", "k"), Other("MULTI"), Other("SET", "k", "1"), Other("EXEC"), C("MULTI"),
        C("SET", "z", "1"), C("EXEC"), C("WATCH", "k"), Other("MULTI"), Other("GET", "k"),
        Other("EXEC"), C("MULTI"), C("SET", "z", "2"), C("EXEC"), C("GET", "z"),
    ],
    "watch_no_op_writes": [
        # Commands that change nothing are no modification in Redis.
        C("SET", "k", "v"), C("WATCH", "k"), Other("SET", "k", "x", "NX"),
        Other("RENAME", "k", "k"), Other("SETRANGE", "k", "0", ""), Other("PERSIST", "k"),
        Other("GETEX", "k"), Other("EXPIRE", "nope", "10"), Other("MSETNX", "k", "1", "n", "1"),
        C("MULTI"), C("SET", "z", "1"), C("EXEC"),
    ],
    "watch_no_op_writes_on_missing_key": [
        C("SET", "e", "v"), C("WATCH", "m"), Other("DEL", "m"), Other("UNLINK", "m"),
        Other("GETDEL", "m"), Other("PERSIST", "m"), Other("EXPIRE", "m", "10"),
        Other("SET", "m", "x", "XX"), Other("GETEX", "m", "EX", "10"), Other("SETRANGE", "m", "0", ""),
        Other("RENAME", "m", "n"), Other("COPY", "m", "n"), Other("INCRBYFLOAT", "e", "x"),
        Other("RENAMENX", "e", "e"), Other("DEL", "nothing"),
        C("MULTI"), C("SET", "z", "1"), C("EXEC"),
    ],
    "watch_no_op_ttl_changes": [
        C("SET", "k", "v"), C("SET", "t", "v", "EX", "100"), C("WATCH", "k", "t"),
        Other("EXPIRE", "k", "100", "XX"), Other("EXPIRE", "t", "200", "NX"),
        Other("EXPIRE", "t", "50", "GT"), Other("RENAMENX", "k", "t"), Other("COPY", "k", "t"),
        Other("SETNX", "t", "x"), C("MULTI"), C("SET", "z", "1"), C("EXEC"),
    ],
    "watch_append_empty": [
        C("SET", "k", "v"), C("WATCH", "k"), Other("APPEND", "k", ""), C("MULTI"),
        C("SET", "z", "1"), C("EXEC"),
    ],
    "watch_incrby_0": [
        C("SET", "k", "1"), C("WATCH", "k"), Other("INCRBY", "k", "0"), C("MULTI"),
        C("SET", "z", "1"), C("EXEC"),
    ],
    "watch_getex_persist": [
        C("SET", "k", "v", "EX", "100"), C("WATCH", "k"), Other("GETEX", "k", "PERSIST"), C("MULTI"),
        C("SET", "z", "1"), C("EXEC"),
    ],
    "watch_getdel": [
        C("SET", "k", "v"), C("WATCH", "k"), Other("GETDEL", "k"), C("MULTI"), C("SET", "z", "1"),
        C("EXEC"),
    ],
    "watch_copy_onto": [
        C("SET", "src", "v"), C("WATCH", "k"), Other("COPY", "src", "k"), C("MULTI"),
        C("SET", "z", "1"), C("EXEC"),
    ],
    "watch_mset": [
        C("WATCH", "k"), Other("MSET", "a", "1", "k", "2"), C("MULTI"), C("SET", "z", "1"), C("EXEC"),
    ],
    "watch_already_expired_key": [
        C("SET", "k", "v", "PX", "100"), Wait(300), C("WATCH", "k"), C("MULTI"), C("SET", "z", "1"),
        C("EXEC"), C("EXISTS", "z"),
    ],
    "watch_already_expired_key_then_set": [
        C("SET", "k", "v", "PX", "100"), Wait(300), C("WATCH", "k"), Other("SET", "k", "w"),
        C("MULTI"), C("SET", "z", "1"), C("EXEC"), C("EXISTS", "z"),
    ],
    "anothers_aborted_exec_is_no_modification": [
        C("SET", "k", "1"), C("WATCH", "k"), Other("WATCH", "j"), Other("SET", "j", "1"),
        Other("MULTI"), Other("SET", "k", "2"), Other("EXEC"), Other("MULTI"), Other("SET", "k", "3"),
        Other("NOSUCH"), Other("EXEC"), C("MULTI"), C("INCR", "k"), C("EXEC"),
    ],
    "two_watchers_one_wins": [
        C("SET", "k", "1"), C("WATCH", "k"), Other("WATCH", "k"), Other("MULTI"),
        Other("INCR", "k"), Other("EXEC"), C("MULTI"), C("INCR", "k"), C("EXEC"), C("GET", "k"),
    ],
    "watch_selected_db": [
        C("SELECT", "2"), C("SET", "k", "1"), C("WATCH", "k"), C("SELECT", "0"), Other("SELECT", "2"),
        Other("DEL", "k"), C("MULTI"), C("SET", "z", "1"), C("EXEC"), C("EXISTS", "z"),
    ],
}
