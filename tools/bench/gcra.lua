-- GCRA in Lua, the way people rate-limit on a stock redis-server, for tools/bench.sh to compare
-- with Sluice's native GCRA.TAKE. Same decision and reply shape as GCRA.TAKE
-- (allowed, remaining, retry_after_ms, reset_after_ms, limit); state is the TAT in microseconds.
-- KEYS[1] = limiter key; ARGV = quota, period_ms, capacity, cost
local quota = tonumber(ARGV[1])
local period_us = tonumber(ARGV[2]) * 1000
local capacity = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local emission = period_us / quota
local tolerance = emission * capacity

local tat = tonumber(redis.call('GET', KEYS[1]))
if tat == nil or tat < now then
  tat = now
end
local new_tat = tat + emission * cost
local allowed = new_tat - tolerance <= now
local after = tat
local retry_ms = 0
if allowed then
  after = new_tat
  if cost > 0 then
    redis.call('SET', KEYS[1], string.format('%d', new_tat), 'PX',
               math.max(1, math.ceil((new_tat - now) / 1000)))
  end
elseif cost > capacity then
  retry_ms = -1
else
  retry_ms = math.ceil((new_tat - tolerance - now) / 1000)
end
local remaining = math.floor((now + tolerance - after) / emission)
if remaining < 0 then remaining = 0 end
if remaining > capacity then remaining = capacity end
return {allowed and 1 or 0, remaining, retry_ms, math.ceil((after - now) / 1000), capacity}
