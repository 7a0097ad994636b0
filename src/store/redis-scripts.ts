import { createHash } from 'node:crypto';

// The Redis store's writes as Lua scripts: Redis runs a script alone, so each check-then-write
// (create if absent, claim if the epoch is still the same, record if the writer's epoch is the
// run's) is atomic. Every script takes the key prefix as ARGV[1] and builds its keys from it, so
// the store needs one Redis, not a Redis Cluster.
//
// Keys, under the prefix P:
//   P meta                       hash: version
//   P run:ID                     hash: the run's fields (JSON values as text; absent = null)
//   P steps:ID                   hash: step key → the step's text (step-codec.ts)
//   P states:ID                  hash: step key → its status (a success is final, others give way)
//   P order:ID                   list: step keys in the order they were first recorded
//   P blobs:ID                   hash: step key → the blob its text refers to
//   P blob:HASH, P blob-refs     a big output's JSON; how many steps refer to it
//   P runs, P chain:C, P status:S, P status-chain:S:C
//                                sorted sets by created_at, for listing newest first
//   P finished                   sorted set by finished_at, for prune
//   P reruns:ID                  sorted set by created_at: the re-runs of run ID
//   P wait:ID, P waits, …        runs that wait: see redis-wait-scripts.ts

export interface Script {
  readonly lua: string;
  readonly sha: string;
}

/** A script's text with the prefix and the helpers every script has, and its sha1 (for EVALSHA). */
export function script(body: string): Script {
  const lua = `local p = ARGV[1]
local function reindex(id, chain, score, from, to)
  if from == to then return end
  if from then
    redis.call('ZREM', p .. 'status:' .. from, id)
    redis.call('ZREM', p .. 'status-chain:' .. from .. ':' .. chain, id)
  end
  redis.call('ZADD', p .. 'status:' .. to, score, id)
  redis.call('ZADD', p .. 'status-chain:' .. to .. ':' .. chain, score, id)
end
local function answer(flag, k)
  local r = redis.call('HGETALL', k)
  table.insert(r, 1, flag)
  return r
end
${body}`;
  return { lua, sha: createHash('sha1').update(lua).digest('hex') };
}

/** ARGV: P, id, created_at, chain, field, value, … → {'1'} created, or {'0', field, value, …}. */
export const CREATE = script(`
local id, score, chain = ARGV[2], ARGV[3], ARGV[4]
local k = p .. 'run:' .. id
if redis.call('EXISTS', k) == 1 then return answer('0', k) end
redis.call('HSET', k, unpack(ARGV, 5))
for i = 5, #ARGV - 1, 2 do
  if ARGV[i] == 'rerun_of' then redis.call('ZADD', p .. 'reruns:' .. ARGV[i + 1], score, id) end
end
redis.call('ZADD', p .. 'runs', score, id)
redis.call('ZADD', p .. 'chain:' .. chain, score, id)
reindex(id, chain, score, false, 'running')
return {'1'}`);

/** ARGV: P, id, expected epoch, owner, lease_until, now, queue or '' → {'1'|'0', field, value, …}; {'0'} alone: no run. */
export const CLAIM = script(`
local id = ARGV[2]
local k = p .. 'run:' .. id
local cur = redis.call('HMGET', k, 'epoch', 'status', 'chain', 'created_at')
if not cur[1] then return {'0'} end
if tonumber(cur[1]) ~= tonumber(ARGV[3]) then return answer('0', k) end
reindex(id, cur[3], cur[4], cur[2], 'running')
redis.call('ZREM', p .. 'finished', id)
redis.call('HSET', k, 'status', 'running', 'owner', ARGV[4], 'lease_until', ARGV[5], 'updated_at', ARGV[6],
  'epoch', tostring(tonumber(cur[1]) + 1), 'cancel_requested', '0')
redis.call('HDEL', k, 'finished_at', 'outputs', 'error')
if ARGV[7] == '' then redis.call('HDEL', k, 'queue') else redis.call('HSET', k, 'queue', ARGV[7]) end
return answer('1', k)`);

/**
 * ARGV: P, then per batch: run id, epoch, step count, and per step: key, status, text, blob hash
 * or '', blob text or '' → one 1 (ok) or 0 (fenced) per batch. A success is final; a failed or
 * skipped result gives way to a later one (keeping its place in the order).
 */
export const RECORD = script(`
local refs = p .. 'blob-refs'
local function unref(hash)
  if redis.call('HINCRBY', refs, hash, -1) <= 0 then
    redis.call('HDEL', refs, hash)
    redis.call('DEL', p .. 'blob:' .. hash)
  end
end
local out = {}
local i = 2
while i <= #ARGV do
  local id, epoch, n = ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])
  i = i + 3
  local current = redis.call('HGET', p .. 'run:' .. id, 'epoch')
  if current and tonumber(current) == epoch then
    out[#out + 1] = 1
    local states, blobs = p .. 'states:' .. id, p .. 'blobs:' .. id
    for j = 1, n do
      local key, status, text, hash = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
      local before = redis.call('HGET', states, key)
      if before ~= 'succeeded' then
        if not before then redis.call('RPUSH', p .. 'order:' .. id, key) end
        redis.call('HSET', p .. 'steps:' .. id, key, text)
        redis.call('HSET', states, key, status)
        local old = redis.call('HGET', blobs, key)
        if hash ~= '' then
          if redis.call('HINCRBY', refs, hash, 1) == 1 then redis.call('SET', p .. 'blob:' .. hash, ARGV[i + 4]) end
          redis.call('HSET', blobs, key, hash)
        elseif old then
          redis.call('HDEL', blobs, key)
        end
        if old then unref(old) end
      end
      i = i + 5
    end
  else
    out[#out + 1] = 0
    i = i + 5 * n
  end
end
return out`);

/** ARGV: P, id, epoch, status, finished_at, outputs or '', error or '' → 1 ok, 0 fenced. */
export const FINISH = script(`
local id = ARGV[2]
local k = p .. 'run:' .. id
local cur = redis.call('HMGET', k, 'epoch', 'status', 'chain', 'created_at')
if not cur[1] or tonumber(cur[1]) ~= tonumber(ARGV[3]) then return 0 end
reindex(id, cur[3], cur[4], cur[2], ARGV[4])
redis.call('HSET', k, 'status', ARGV[4], 'finished_at', ARGV[5], 'updated_at', ARGV[5])
redis.call('HDEL', k, 'owner', 'lease_until')
if ARGV[6] == '' then redis.call('HDEL', k, 'outputs') else redis.call('HSET', k, 'outputs', ARGV[6]) end
if ARGV[7] == '' then redis.call('HDEL', k, 'error') else redis.call('HSET', k, 'error', ARGV[7]) end
redis.call('ZADD', p .. 'finished', ARGV[5], id)
return 1`);

/** ARGV: P, id, epoch, lease_until, now → {1 ok | 0 fenced, cancel requested 1 | 0}. */
export const RENEW = script(`
local k = p .. 'run:' .. ARGV[2]
local cur = redis.call('HMGET', k, 'epoch', 'status', 'cancel_requested')
if not cur[1] then return {0, 0} end
local cancel = cur[3] == '1' and 1 or 0
if tonumber(cur[1]) ~= tonumber(ARGV[3]) or cur[2] ~= 'running' then return {0, cancel} end
redis.call('HSET', k, 'lease_until', ARGV[4], 'updated_at', ARGV[5])
return {1, cancel}`);

/** ARGV: P, id, now → the run's fields afterwards (empty: no run). */
export const CANCEL = script(`
local k = p .. 'run:' .. ARGV[2]
local cur = redis.call('HMGET', k, 'status', 'cancel_requested')
if cur[1] == 'running' and cur[2] ~= '1' then redis.call('HSET', k, 'cancel_requested', '1', 'updated_at', ARGV[3]) end
return redis.call('HGETALL', k)`);

/** ARGV: P, finished before, at most this many → how many runs went (call again while it is the maximum). */
export const PRUNE = script(`
local ids = redis.call('ZRANGEBYSCORE', p .. 'finished', '-inf', '(' .. ARGV[2], 'LIMIT', 0, tonumber(ARGV[3]))
for _, id in ipairs(ids) do
  local cur = redis.call('HMGET', p .. 'run:' .. id, 'status', 'chain', 'rerun_of')
  for _, hash in ipairs(redis.call('HVALS', p .. 'blobs:' .. id)) do
    if redis.call('HINCRBY', p .. 'blob-refs', hash, -1) <= 0 then
      redis.call('HDEL', p .. 'blob-refs', hash)
      redis.call('DEL', p .. 'blob:' .. hash)
    end
  end
  redis.call('DEL', p .. 'run:' .. id, p .. 'steps:' .. id, p .. 'states:' .. id, p .. 'order:' .. id, p .. 'blobs:' .. id)
  -- The run's waits and wake time (redis-wait-scripts.ts).
  for _, wid in ipairs(redis.call('ZRANGE', p .. 'run-waits:' .. id, 0, -1)) do
    local name = redis.call('HGET', p .. 'wait:' .. wid, 'name')
    if name then redis.call('ZREM', p .. 'open-named:' .. name, wid) end
    redis.call('ZREM', p .. 'waits', wid)
    redis.call('ZREM', p .. 'open-waits', wid)
    redis.call('DEL', p .. 'wait:' .. wid)
  end
  redis.call('DEL', p .. 'run-waits:' .. id)
  redis.call('ZREM', p .. 'wakes', id)
  redis.call('ZREM', p .. 'runs', id)
  redis.call('ZREM', p .. 'finished', id)
  if cur[3] then redis.call('ZREM', p .. 'reruns:' .. cur[3], id) end
  if cur[1] and cur[2] then
    redis.call('ZREM', p .. 'chain:' .. cur[2], id)
    redis.call('ZREM', p .. 'status:' .. cur[1], id)
    redis.call('ZREM', p .. 'status-chain:' .. cur[1] .. ':' .. cur[2], id)
  end
end
return #ids`);

/** ARGV: P, id → the step texts in the order they were recorded. */
export const STEPS = script(`
local keys = redis.call('LRANGE', p .. 'order:' .. ARGV[2], 0, -1)
local out = {}
-- In chunks: unpack() of a long list overflows Lua's stack (a for_each of thousands of elements).
for s = 1, #keys, 1000 do
  local chunk = {}
  for j = s, math.min(s + 999, #keys) do chunk[#chunk + 1] = keys[j] end
  for _, text in ipairs(redis.call('HMGET', p .. 'steps:' .. ARGV[2], unpack(chunk))) do out[#out + 1] = text end
end
return out`);
