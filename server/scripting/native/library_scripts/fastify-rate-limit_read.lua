
  -- Key to operate on
  local key = KEYS[1]

  -- Read the counter without mutating it
  local current = redis.call('GET', key)

  -- A missing key returns false from redis.call (and nil from redis.pcall);
  -- "not current" covers both, so the clean-state branch is robust either way.
  if not current then
    -- Key doesn't exist: clean state
    return {0, 0}
  end

  -- Read the remaining TTL in milliseconds
  local ttl = redis.call('PTTL', key)
  if ttl < 0 then
    -- -2 (no key) or -1 (no expiry): report no active window
    ttl = 0
  end

  return {tonumber(current), ttl}
