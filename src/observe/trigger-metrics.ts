import type { Registry } from 'prom-client';
import { lazyPackage } from '../common/lazy-package.js';
import type { TriggerEvent } from '../triggers/scheduler.js';

const promClient = lazyPackage<typeof import('prom-client')>('prom-client');

// `toolchain_trigger_fires_total{chain,trigger,outcome}`: the ticks, events and webhook
// deliveries this process fired (outcome `fired`), dropped (`skipped`: a run of the trigger was
// still going, or a queue was full) and could not start (`refused`: the chain refused the
// input). One another process fired first is counted there, not here, so the sum over processes
// is the number of runs triggers started. A paused trigger's ticks and events are none of these:
// they are not counted.
//
// `toolchain_triggers_paused`: how many triggers of the chains this process has loaded are
// paused, read from the run store when metrics are scraped (a pause is the store's record, made
// by whichever process, so no process could count them from its own events).

export function countTriggerFires(registry: Registry): (event: TriggerEvent) => void {
  const existing = registry.getSingleMetric('toolchain_trigger_fires_total');
  const { Counter } = promClient();
  const counter =
    (existing as InstanceType<typeof Counter<'chain' | 'trigger' | 'outcome'>> | undefined) ??
    new Counter({
      name: 'toolchain_trigger_fires_total',
      help: 'Trigger ticks, events and webhook deliveries by chain, trigger and outcome (fired, skipped, refused) in this process.',
      labelNames: ['chain', 'trigger', 'outcome'] as const,
      registers: [registry],
    });
  return (e) => {
    if (e.type === 'trigger:fired') counter.inc({ chain: e.chain, trigger: e.trigger, outcome: 'fired' });
    else if (e.type === 'trigger:skipped') counter.inc({ chain: e.chain, trigger: e.trigger, outcome: e.reason === 'refused' ? 'refused' : 'skipped' });
  };
}

/** `paused`: how many loaded triggers are paused now (a read of the store); a failed read is not a scrape's failure. */
export function registerPausedTriggers(registry: Registry, paused: () => Promise<number>): void {
  // One registry may serve several engines: the first one's store is the one counted.
  if (registry.getSingleMetric('toolchain_triggers_paused') !== undefined) return;
  const { Gauge } = promClient();
  const gauge = new Gauge({
    name: 'toolchain_triggers_paused',
    help: 'Triggers of the loaded chains that are paused (toolchain triggers pause).',
    registers: [registry],
    async collect() {
      const n = await paused().catch(() => undefined);
      if (n !== undefined) gauge.set(n);
    },
  });
}
