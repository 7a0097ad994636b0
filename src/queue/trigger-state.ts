import type { Redis as RedisClient } from 'ioredis';
import type { TriggerState } from '../triggers/scheduler.js';

// What the processes on a queue know of one trigger, kept in the queue's Redis so that whichever
// of them takes a tick job carries on where the last one stopped: the schedule it was computed
// for, the time up to which ticks were taken in, the ticks kept for later (`overlap: queue`, or
// caught up by `catchup: all`). A process reads it, looks, and writes it back only if nobody
// wrote it meanwhile (a version number, compared in one Lua script); otherwise it looks again
// from the newer state. Firing is safe to repeat (a tick's run id is made once), so a look that
// lost the race has started nothing twice.
//
// Key: `QUEUE~triggers:state:CHAIN#ID`, a hash of `v` (the version) and `state` (JSON). Not under
// the run store's prefix (`toolchain:` by default) in the same Redis: a store opened there must
// find only its own keys, and a state written before the store's first open would look like a
// stranger's. The `~`, which no queue name or store prefix has, keeps it apart from both.
// Each write keeps it 30 days: a state whose trigger vanished while no process looked expires.

const KEEP_MS = 30 * 24 * 3_600_000;

/** Writes the state when its version is still the one read, and counts the version up. */
const COMPARE_AND_SET = `
local v = redis.call('HGET', KEYS[1], 'v') or '0'
if v ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'v', tostring(tonumber(v) + 1), 'state', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`;

export interface LoadedState {
  /** '0' when there is none. */
  readonly version: string;
  readonly state: TriggerState | undefined;
}

interface StateJson {
  readonly fingerprint: string;
  readonly last: number;
  readonly pending: number[];
  readonly caughtUp: number[];
}

export class TriggerStates {
  constructor(
    private readonly redis: RedisClient,
    private readonly queueName: string,
  ) {}

  key(schedulerId: string): string {
    return `${this.queueName}~triggers:state:${schedulerId}`;
  }

  async load(schedulerId: string): Promise<LoadedState> {
    const [v, text] = await this.redis.hmget(this.key(schedulerId), 'v', 'state');
    return { version: v ?? '0', state: text ? decode(text) : undefined };
  }

  /** False: another process wrote it since `version` was read. */
  async save(schedulerId: string, version: string, state: TriggerState): Promise<boolean> {
    return (await this.redis.eval(COMPARE_AND_SET, 1, this.key(schedulerId), version, encode(state), String(KEEP_MS))) === 1;
  }

  async remove(schedulerId: string): Promise<void> {
    await this.redis.del(this.key(schedulerId));
  }
}

function encode(state: TriggerState): string {
  const json: StateJson = { fingerprint: state.fingerprint, last: state.last, pending: state.pending, caughtUp: [...state.caughtUp] };
  return JSON.stringify(json);
}

/** A state this version cannot read counts as none: the trigger is then looked at afresh, from the store. */
function decode(text: string): TriggerState | undefined {
  try {
    const j = JSON.parse(text) as Partial<StateJson>;
    const numbers = (v: unknown): v is number[] => Array.isArray(v) && v.every((n) => typeof n === 'number' && Number.isFinite(n));
    if (typeof j.fingerprint !== 'string' || typeof j.last !== 'number' || !Number.isFinite(j.last) || !numbers(j.pending) || !numbers(j.caughtUp)) return undefined;
    return { fingerprint: j.fingerprint, last: j.last, pending: [...j.pending], caughtUp: new Set(j.caughtUp) };
  } catch {
    return undefined;
  }
}
