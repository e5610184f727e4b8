#include "server/core/acl_key_perms.h"

#include <algorithm>
#include <iterator>
#include <string_view>

#include "server/core/acl_user.h"
#include "server/core/command.h"

namespace sluice::server {

namespace {

constexpr uint8_t R = kAclKeyRead, W = kAclKeyWrite;

struct Entry {
  std::string_view name;
  uint8_t count;
  std::array<uint8_t, 4> perms;
};

// Redis 7.0.15's COMMAND INFO key specs, where they differ from the default, sorted by name.
// "set" is Redis's SET without GET (its key spec's flags vary; with GET it also reads).
constexpr Entry kRedis[] = {
    {"append", 1, {W}},
    {"bitop", 2, {W, R}},
    {"blmove", 2, {R | W, W}},
    {"brpoplpush", 2, {R | W, W}},
    {"copy", 2, {R, W}},
    {"del", 1, {W}},
    {"exists", 1, {0}},
    {"expire", 1, {W}},
    {"expireat", 1, {W}},
    {"geoadd", 1, {W}},
    {"georadius", 3, {R, W, W}},
    {"georadiusbymember", 3, {R, W, W}},
    {"geosearchstore", 2, {W, R}},
    {"hdel", 1, {W}},
    {"hexists", 1, {0}},
    {"hlen", 1, {0}},
    {"hmset", 1, {W}},
    {"hset", 1, {W}},
    {"hsetnx", 1, {W}},
    {"hstrlen", 1, {0}},
    {"linsert", 1, {W}},
    {"llen", 1, {0}},
    {"lmove", 2, {R | W, W}},
    {"lpush", 1, {W}},
    {"lpushx", 1, {W}},
    {"lrem", 1, {W}},
    {"lset", 1, {W}},
    {"ltrim", 1, {W}},
    {"memory|usage", 1, {0}},
    {"mset", 1, {W}},
    {"msetnx", 1, {W}},
    {"object|encoding", 1, {0}},
    {"object|freq", 1, {0}},
    {"object|idletime", 1, {0}},
    {"object|refcount", 1, {0}},
    {"persist", 1, {W}},
    {"pexpire", 1, {W}},
    {"pexpireat", 1, {W}},
    {"pfadd", 1, {W}},
    {"pfdebug", 1, {R}},
    {"pfmerge", 2, {R | W, R}},
    {"psetex", 1, {W}},
    {"rename", 2, {R | W, W}},
    {"renamenx", 2, {R | W, W}},
    {"restore", 1, {W}},
    {"restore-asking", 1, {W}},
    {"rpoplpush", 2, {R | W, W}},
    {"rpush", 1, {W}},
    {"rpushx", 1, {W}},
    {"sadd", 1, {W}},
    {"scard", 1, {0}},
    {"sdiffstore", 2, {W, R}},
    {"set", 1, {W}},
    {"setex", 1, {W}},
    {"setnx", 1, {W}},
    {"setrange", 1, {W}},
    {"sinterstore", 2, {W, R}},
    {"sismember", 1, {0}},
    {"smove", 2, {R | W, W}},
    {"sort", 3, {R, R, W}},
    {"spublish", 1, {0}},
    {"srem", 1, {W}},
    {"ssubscribe", 1, {0}},
    {"strlen", 1, {0}},
    {"sunionstore", 2, {W, R}},
    {"sunsubscribe", 1, {0}},
    {"touch", 1, {0}},
    {"type", 1, {0}},
    {"unlink", 1, {W}},
    {"watch", 1, {0}},
    {"xack", 1, {W}},
    {"xadd", 1, {W}},
    {"xautoclaim", 1, {W}},
    {"xclaim", 1, {W}},
    {"xdel", 1, {W}},
    {"xgroup|create", 1, {W}},
    {"xgroup|createconsumer", 1, {W}},
    {"xgroup|delconsumer", 1, {W}},
    {"xgroup|destroy", 1, {W}},
    {"xgroup|setid", 1, {W}},
    {"xlen", 1, {0}},
    {"xreadgroup", 1, {R}},
    {"xsetid", 1, {W}},
    {"xtrim", 1, {W}},
    {"zadd", 1, {W}},
    {"zcard", 1, {0}},
    {"zdiffstore", 2, {W, R}},
    {"zinterstore", 2, {W, R}},
    {"zrangestore", 2, {W, R}},
    {"zrem", 1, {W}},
    {"zremrangebylex", 1, {W}},
    {"zremrangebyrank", 1, {W}},
    {"zremrangebyscore", 1, {W}},
    {"zunionstore", 2, {W, R}},
};

}  // namespace

AclKeyPerms AclKeyPermsOf(const CommandSpec& spec) {
  auto it = std::lower_bound(std::begin(kRedis), std::end(kRedis), spec.name,
                             [](const Entry& e, const std::string& n) { return e.name < n; });
  if (it != std::end(kRedis) && it->name == spec.name) return {it->count, it->perms};
  const bool read_only = (spec.flags & kReadOnly) && !(spec.flags & kWrite);
  return {1, {static_cast<uint8_t>(read_only ? R : R | W)}};
}

}  // namespace sluice::server
