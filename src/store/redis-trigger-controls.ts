import type { RedisAccess } from './redis-waits.js';
import { script } from './redis-scripts.js';
import { controlFromFields, noControl, type TriggerChange, type TriggerControl, type TriggerControlStore, type TriggerPause } from './trigger-control-types.js';

// The Redis store's paused triggers (the contract is trigger-control-types.ts). Pausing and
// resuming are a script each (the check and the write together); the list reads the index of
// keys and each record in one pipeline.
//
// Keys, under the prefix P:
//   P trigger:KEY                hash: paused_by, paused_at, reason (while paused), resumed_at
//   P triggers                   set of every KEY with a record

/** ARGV: P, key, by, at, reason or '' → {'1' paused | '0' paused already, field, value, …}. */
const PAUSE = script(`
local k = p .. 'trigger:' .. ARGV[2]
if redis.call('HEXISTS', k, 'paused_at') == 1 then return answer('0', k) end
redis.call('HSET', k, 'paused_by', ARGV[3], 'paused_at', ARGV[4])
if ARGV[5] ~= '' then redis.call('HSET', k, 'reason', ARGV[5]) else redis.call('HDEL', k, 'reason') end
redis.call('SADD', p .. 'triggers', ARGV[2])
return answer('1', k)`);

/** ARGV: P, key, at → {'1' resumed | '0' not paused, field, value, …}. */
const RESUME = script(`
local k = p .. 'trigger:' .. ARGV[2]
if redis.call('HEXISTS', k, 'paused_at') == 0 then return answer('0', k) end
redis.call('HDEL', k, 'paused_by', 'paused_at', 'reason')
redis.call('HSET', k, 'resumed_at', ARGV[3])
return answer('1', k)`);

export class RedisTriggerControls implements TriggerControlStore {
  constructor(
    private readonly prefix: string,
    private readonly access: RedisAccess,
  ) {}

  async pause(key: string, pause: TriggerPause): Promise<TriggerChange> {
    const answer = await this.access.eval<string[]>(`cannot pause trigger ${key}`, 'write', PAUSE, [key, pause.by, pause.at, pause.reason ?? '']);
    return { control: fromFields(key, answer, 1), changed: answer[0] === '1' };
  }

  async resume(key: string, at: number): Promise<TriggerChange> {
    const answer = await this.access.eval<string[]>(`cannot resume trigger ${key}`, 'write', RESUME, [key, at]);
    return { control: fromFields(key, answer, 1), changed: answer[0] === '1' };
  }

  list(): Promise<readonly TriggerControl[]> {
    const p = this.prefix;
    return this.access.command('cannot list paused triggers', async (r) => {
      const keys = (await r.smembers(`${p}triggers`)).sort();
      if (keys.length === 0) return [];
      const pipeline = r.pipeline();
      for (const key of keys) pipeline.hgetall(`${p}trigger:${key}`);
      const out: TriggerControl[] = [];
      for (const [i, [error, hash]] of ((await pipeline.exec()) ?? []).entries()) {
        if (error) throw error;
        const fields = hash as Record<string, string>;
        if (Object.keys(fields).length > 0) out.push(fromHash(keys[i]!, fields));
      }
      return out;
    });
  }
}

/** A flat HGETALL answer (`field, value, …`, from `from` on) as the key's record. */
function fromFields(key: string, fields: readonly string[], from: number): TriggerControl {
  const h: Record<string, string> = {};
  for (let i = from; i + 1 < fields.length; i += 2) h[fields[i]!] = fields[i + 1]!;
  return Object.keys(h).length === 0 ? noControl(key) : fromHash(key, h);
}

function fromHash(key: string, h: Readonly<Record<string, string>>): TriggerControl {
  return controlFromFields(key, { paused_by: h.paused_by ?? null, paused_at: h.paused_at ?? null, reason: h.reason ?? null, resumed_at: h.resumed_at ?? null });
}
