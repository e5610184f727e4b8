-- A sliding-window log on one key, the way people write a global limiter on a stock
-- redis-server, for tools/bench.sh --collections: erase what left the window, log this call,
-- count. Every call erases at the set's low end, where the erased elements' deletion markers
-- gather (docs/engine.md, "Hot collections": sliding windows).
-- KEYS[1] = the window's sorted set; ARGV = window in microseconds, a member suffix
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[1]))
redis.call('ZADD', KEYS[1], now, now .. ':' .. ARGV[2])
return redis.call('ZCARD', KEYS[1])
