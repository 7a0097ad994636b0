import { script } from './redis-scripts.js';

// The Redis store's writes for runs that wait, as Lua scripts (see redis-scripts.ts for why
// scripts): opening a wait under the owner's epoch, parking a run (its status and its wake time
// in one script), resolving a wait (first writer wins, and a waiting run is due at once), looking
// for due runs, and keeping an event once by id.
//
// Keys, under the prefix P (a wait's `seq` is its opening order, the score of every wait index):
//   P wait:ID                    hash: the wait's fields (JSON values as text; absent = null)
//   P wait-seq                   the last `seq` given
//   P waits                      sorted set of every wait, by seq
//   P run-waits:RUN              sorted set of a run's waits, by seq
//   P open-waits                 sorted set of the waits not yet resolved, by seq
//   P open-named:NAME            sorted set of the open waits for the event NAME, by seq
//   P wakes                      sorted set of parked runs by wake time (none: only on a resolve)
//   P event:ID, P events         an event (hash); every event by the time it was sent, for prune
//   P event-seq                  the last event position given
//   P event-log                  sorted set of every event, by its position (the order recorded)
//   P event-log:NAME             sorted set of the events named NAME, by position

/**
 * ARGV: P, run id, epoch, wait id, now, name or '' (indexed as open under it), then field, value,
 * … (key, kind and whichever of name, match, until, detail are not null) → {'fenced'}, or
 * {'1' opened | '0' there already, field, value, …}.
 */
export const OPEN_WAIT = script(`
local rid, wid = ARGV[2], ARGV[4]
local cur = redis.call('HMGET', p .. 'run:' .. rid, 'epoch', 'chain')
if not cur[1] or tonumber(cur[1]) ~= tonumber(ARGV[3]) then return {'fenced'} end
local k = p .. 'wait:' .. wid
if redis.call('EXISTS', k) == 1 then return answer('0', k) end
local seq = redis.call('INCR', p .. 'wait-seq')
redis.call('HSET', k, 'id', wid, 'run_id', rid, 'chain', cur[2], 'created_at', ARGV[5], 'seq', seq, unpack(ARGV, 7))
redis.call('ZADD', p .. 'waits', seq, wid)
redis.call('ZADD', p .. 'run-waits:' .. rid, seq, wid)
redis.call('ZADD', p .. 'open-waits', seq, wid)
if ARGV[6] ~= '' then redis.call('ZADD', p .. 'open-named:' .. ARGV[6], seq, wid) end
return answer('1', k)`);

/** ARGV: P, run id, epoch, wake time or '' (none), now, then the ids of the waits it parks on → 1 ok, 0 fenced. */
export const PARK = script(`
local id = ARGV[2]
local k = p .. 'run:' .. id
local cur = redis.call('HMGET', k, 'epoch', 'status', 'chain', 'created_at')
if not cur[1] or tonumber(cur[1]) ~= tonumber(ARGV[3]) then return 0 end
reindex(id, cur[3], cur[4], cur[2], 'waiting')
redis.call('HSET', k, 'status', 'waiting', 'updated_at', ARGV[5])
redis.call('HDEL', k, 'owner', 'lease_until')
local at = ARGV[4]
for i = 6, #ARGV do
  if redis.call('HEXISTS', p .. 'wait:' .. ARGV[i], 'outcome') == 1 then at = ARGV[5] end
end
if at == '' then redis.call('ZREM', p .. 'wakes', id) else redis.call('ZADD', p .. 'wakes', at, id) end
return 1`);

/** ARGV: P, wait id, outcome, now → {} no such wait, or {'1' first | '0' resolved before, field, value, …}. */
export const RESOLVE = script(`
local wid, now = ARGV[2], ARGV[4]
local k = p .. 'wait:' .. wid
local cur = redis.call('HMGET', k, 'run_id', 'outcome', 'name')
if not cur[1] then return {} end
if cur[2] then return answer('0', k) end
redis.call('HSET', k, 'outcome', ARGV[3], 'resolved_at', now)
redis.call('ZREM', p .. 'open-waits', wid)
if cur[3] then redis.call('ZREM', p .. 'open-named:' .. cur[3], wid) end
if redis.call('HGET', p .. 'run:' .. cur[1], 'status') == 'waiting' then redis.call('ZADD', p .. 'wakes', now, cur[1]) end
return answer('1', k)`);

/**
 * ARGV: P, now, at most this many → the fields of each waiting run whose wake time has come,
 * earliest first. Wake times of runs that are no longer waiting (claimed, finished) are dropped.
 */
export const DUE = script(`
local wakes, limit = p .. 'wakes', tonumber(ARGV[3])
local out = {}
while #out < limit do
  -- The runs kept so far stay at the front of the set; those dropped are gone from it.
  local ids = redis.call('ZRANGEBYSCORE', wakes, '-inf', ARGV[2], 'LIMIT', #out, limit - #out)
  if #ids == 0 then break end
  for _, id in ipairs(ids) do
    local k = p .. 'run:' .. id
    if redis.call('HGET', k, 'status') == 'waiting' then out[#out + 1] = redis.call('HGETALL', k) else redis.call('ZREM', wakes, id) end
  end
end
return out`);

/**
 * ARGV: P, id, name, payload, sent at → 1 kept, 0 an event with that id was kept before. Its
 * position is given and logged in the same script, so a reader never sees a later one without it.
 */
export const EVENT = script(`
local k = p .. 'event:' .. ARGV[2]
if redis.call('EXISTS', k) == 1 then return 0 end
local seq = redis.call('INCR', p .. 'event-seq')
redis.call('HSET', k, 'id', ARGV[2], 'name', ARGV[3], 'payload', ARGV[4], 'at', ARGV[5], 'seq', seq)
redis.call('ZADD', p .. 'events', ARGV[5], ARGV[2])
redis.call('ZADD', p .. 'event-log', seq, ARGV[2])
redis.call('ZADD', p .. 'event-log:' .. ARGV[3], seq, ARGV[2])
return 1`);

/** ARGV: P, sent before, at most this many → how many events went (call again while it is the maximum). */
export const PRUNE_EVENTS = script(`
local ids = redis.call('ZRANGEBYSCORE', p .. 'events', '-inf', '(' .. ARGV[2], 'LIMIT', 0, tonumber(ARGV[3]))
for _, id in ipairs(ids) do
  local k = p .. 'event:' .. id
  local name = redis.call('HGET', k, 'name')
  redis.call('DEL', k)
  redis.call('ZREM', p .. 'events', id)
  redis.call('ZREM', p .. 'event-log', id)
  if name then redis.call('ZREM', p .. 'event-log:' .. name, id) end
end
return #ids`);
