-- One fixed window per key: counts the request and, on a window's first request, sets when the
-- window ends. Windows end on a whole second of Redis's clock (so they last between ARGV[1] - 1000
-- and ARGV[1] ms): every response of one window can then name the same X-RateLimit-Reset, however
-- late the reply reaches the service. Returns {count, the window's end as Unix ms}.
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local window = tonumber(ARGV[1])
local current = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if current == 1 or ttl < 0 then
  local endsAt = math.floor((now + window) / 1000) * 1000
  -- a window under a second (tests only) keeps its length
  if endsAt <= now then endsAt = now + window end
  redis.call('PEXPIREAT', KEYS[1], endsAt)
  return {current, endsAt}
end
return {current, now + ttl}
