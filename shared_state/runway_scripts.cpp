#include "shared_state/runway_scripts.hpp"

namespace td::shared_state {

namespace {

// Shared by the runway scripts: the runway's hash read, refilled to the
// server's now, viewed and written back (quota/runway_store.cpp).
const char* const kRunwayPrelude = R"lua(
local key = KEYS[1]
local kind = tonumber(ARGV[1])
local cfg = {c = tonumber(ARGV[2]), i = tonumber(ARGV[3]), o = tonumber(ARGV[4])}
local window = math.max(tonumber(ARGV[5]), 1)
local names = {'c', 'i', 'o'}
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local h = redis.call('HGETALL', key)
local e = {}
for j = 1, #h, 2 do e[h[j]] = tonumber(h[j + 1]) end
local b = {}
for _, n in ipairs(names) do
  b[n] = {learnt = e[n .. 'l'] or 0, level = e[n .. 'v'] or 0, started = (e[n .. 's'] or 0) == 1}
end
local at = e.at or now
local fi, fo = e.fi or 0, e.fo or 0
-- the lower of the profile's limit and the provider's; either alone
local function limit_of(n)
  local l, c = b[n].learnt, cfg[n]
  if l > 0 and c > 0 then return math.min(l, c) end
  if l > 0 then return l end
  return c
end
local function known(n) return limit_of(n) > 0 end
local function rate(n) return limit_of(n) / window end
local function level_of(n) if b[n].started then return b[n].level end return limit_of(n) end
local function combined_ask(i, o) if kind ~= 2 then return i + o end return i end
-- refill to now: a known bucket starts full, refills at its limit per window
local dt = math.max(0, now - at)
for _, n in ipairs(names) do
  if known(n) then
    if b[n].started then b[n].level = math.min(limit_of(n), b[n].level + rate(n) * dt) else b[n].level = limit_of(n) end
    b[n].started = true
  end
end
if now > at then at = now end
-- also the kind, the profile's limits and the window, for the list (kRunways),
-- and the runway's name in the index of runways (its score the last write)
local function save(index)
  local f = {'at', tostring(at), 'fi', tostring(fi), 'fo', tostring(fo), 'k', ARGV[1], 'cc', ARGV[2],
             'ci', ARGV[3], 'co', ARGV[4], 'w', ARGV[5]}
  for _, n in ipairs(names) do
    table.insert(f, n .. 'l'); table.insert(f, tostring(b[n].learnt))
    table.insert(f, n .. 'v'); table.insert(f, tostring(b[n].level))
    table.insert(f, n .. 's'); table.insert(f, b[n].started and '1' or '0')
  end
  redis.call('HSET', key, unpack(f))
  local expiry = tonumber(ARGV[#ARGV])
  redis.call('PEXPIRE', key, expiry)
  redis.call('ZADD', index, now, key)
  redis.call('ZREMRANGEBYSCORE', index, '-inf', now - expiry)
  redis.call('PEXPIRE', index, expiry)
end
)lua";

const char* const kFactsBody = R"lua(
local out = {tostring(now)}
for _, n in ipairs(names) do
  if known(n) then
    table.insert(out, tostring(limit_of(n))); table.insert(out, tostring(level_of(n)))
  else
    table.insert(out, '0'); table.insert(out, '0')
  end
end
local s = redis.call('HMGET', KEYS[2], 'lv', 'lm', 'th', 'ft', 'cp', 'bt')
for j = 1, 4 do table.insert(out, s[j] or '0') end
local cp, bt = tonumber(s[5] or '0'), tonumber(s[6] or '0')
if cp > 0 and now - bt < tonumber(ARGV[6]) then table.insert(out, tostring(cp)) else table.insert(out, '0') end
table.insert(out, redis.call('HGET', KEYS[2], 'rc') or '')
return out
)lua";

const char* const kTakeBody = R"lua(
local ask = {i = tonumber(ARGV[6]), o = tonumber(ARGV[7])}
local margin = tonumber(ARGV[8])
local asks = {c = combined_ask(ask.i, ask.o), i = ask.i, o = ask.o}
local wait = 0
for _, n in ipairs(names) do
  if known(n) then
    local needed = math.min(asks[n] * margin, limit_of(n))
    if b[n].level + 1e-6 < needed then wait = math.max(wait, math.ceil((needed - b[n].level) / rate(n))) end
    b[n].level = b[n].level - asks[n]
  end
end
fi = fi + ask.i
fo = fo + ask.o
save(KEYS[2])
return wait
)lua";

const char* const kSettleBody = R"lua(
local taken = {i = tonumber(ARGV[6]), o = tonumber(ARGV[7])}
local billed = {i = tonumber(ARGV[8]), o = tonumber(ARGV[9])}
local counted = tonumber(ARGV[10]) == 1
local hl = {c = tonumber(ARGV[11]), i = tonumber(ARGV[13]), o = tonumber(ARGV[15])}
local hr = {c = tonumber(ARGV[12]), i = tonumber(ARGV[14]), o = tonumber(ARGV[16])}
local retry_ms = tonumber(ARGV[17])
-- how long before now the headers came (a streamed answer's length)
local age_ms = tonumber(ARGV[24])
-- re-base on the headers: less what other requests in flight took and, for
-- an answer the provider did not count, this request's own ask
local own_i, own_o = 0, 0
if not counted then own_i, own_o = taken.i, taken.o end
local less = {i = math.max(0, fi - taken.i) + own_i, o = math.max(0, fo - taken.o) + own_o}
-- true when the level is now the provider's count; under a lower profile
-- ceiling the runway keeps its own count, never above what is left (refilled
-- at the provider's rate since the headers came)
local function learn(n, less_ask)
  local bk = b[n]
  if hl[n] > 0 then bk.learnt = hl[n] end
  if hr[n] < 0 or bk.learnt <= 0 then return false end
  local left = hr[n] + bk.learnt / window * age_ms - less_ask
  local ceiling = cfg[n]
  if ceiling > 0 and ceiling < bk.learnt then
    local from = ceiling
    if bk.started then from = bk.level end
    bk.level = math.min(from, left)
    bk.started = true
    return false
  end
  bk.level = math.min(bk.learnt, left)
  bk.started = true
  return true
end
local rebased = false
if hl.c >= 0 or hr.c >= 0 or hl.i >= 0 or hr.i >= 0 or hl.o >= 0 or hr.o >= 0 or retry_ms > 0 then
  if kind == 1 then
    rebased = learn('i', less.i)
    learn('o', less.o)
  elseif kind ~= 2 then
    rebased = learn('c', less.i + less.o)
  end
  if retry_ms > 0 then
    for _, n in ipairs(names) do
      if known(n) then b[n].level = math.min(b[n].level, -rate(n) * retry_ms) end
    end
  end
end
if rebased and counted then billed.i = taken.i end
local d = {i = billed.i - taken.i, o = billed.o - taken.o}
local ds = {c = combined_ask(d.i, d.o), i = d.i, o = d.o}
for _, n in ipairs(names) do
  if known(n) then b[n].level = math.min(limit_of(n), b[n].level - ds[n]) end
end
fi = math.max(0, fi - taken.i)
fo = math.max(0, fo - taken.o)
-- what the headers said, as told (the list shows it)
if tonumber(ARGV[23]) > 0 then
  redis.call('HSET', key, 'rl', ARGV[18], 'rr', ARGV[19], 'rt', ARGV[20], 'tr', ARGV[21], 'tt', ARGV[22],
             'hs', ARGV[23])
end
save(KEYS[2])
return 'ok'
)lua";

// Lists the newest runways of the index with their stored fields; the
// arithmetic (refill to now, the tightest bucket) is the replica's
// (quota::RunwayStore::runway_at). It reads the hashes the index names:
// keys a script does not declare, as a single Redis allows (not a cluster).
const char* const kRunwaysLua = R"lua(
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[2]))
local out = {tostring(now)}
for _, k in ipairs(redis.call('ZREVRANGE', KEYS[1], 0, tonumber(ARGV[1]) - 1)) do
  local h = redis.call('HGETALL', k)
  if #h > 0 then
    table.insert(out, k)
    table.insert(out, h)
  end
end
return out
)lua";

const char* const kSessionPutLua = R"lua(
redis.call('HSET', KEYS[1], 'lv', ARGV[1], 'lm', ARGV[2], 'th', ARGV[3], 'ft', ARGV[4])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[5]))
return 'ok'
)lua";

const char* const kSessionFitLua = R"lua(
local old = tonumber(redis.call('HGET', KEYS[1], 'ft') or '0')
local fit = tonumber(ARGV[1])
if old == 0 or fit < old then redis.call('HSET', KEYS[1], 'ft', ARGV[1]) end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return 'ok'
)lua";

const char* const kSessionBilledLua = R"lua(
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
redis.call('HSET', KEYS[1], 'cp', ARGV[1], 'bt', tostring(now))
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return 'ok'
)lua";

const char* const kSessionRecalledLua = R"lua(
local rc = redis.call('HGET', KEYS[1], 'rc') or ''
local n = 0
for _ in string.gmatch(rc, '%S+') do n = n + 1 end
local most = tonumber(ARGV[1])
for i = 3, #ARGV do
  if n >= most then break end
  if rc == '' then rc = ARGV[i] else rc = rc .. ' ' .. ARGV[i] end
  n = n + 1
end
redis.call('HSET', KEYS[1], 'rc', rc)
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return 'ok'
)lua";

}  // namespace

const std::vector<std::string>& scripts() {
  static const std::vector<std::string> all = {
      std::string(kRunwayPrelude) + kFactsBody,
      std::string(kRunwayPrelude) + kTakeBody,
      std::string(kRunwayPrelude) + kSettleBody,
      kSessionPutLua,
      kSessionFitLua,
      kSessionBilledLua,
      kSessionRecalledLua,
      kRunwaysLua,
  };
  return all;
}

}  // namespace td::shared_state
