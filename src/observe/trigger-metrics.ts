import type { Registry } from 'prom-client';
import { lazyPackage } from '../common/lazy-package.js';
import type { TriggerEvent } from '../triggers/scheduler.js';

const promClient = lazyPackage<typeof import('prom-client')>('prom-client');

// `toolchain_trigger_fires_total{chain,trigger,outcome}`: the ticks, events and webhook
// deliveries this process fired (outcome `fired`), dropped (`skipped`: a run of the trigger was
// still going, or a queue was full) and could not start (`refused`: the chain refused the
// input). One another process fired first is counted there, not here, so the sum over processes
// is the number of runs triggers started.

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
  return (e) => counter.inc({ chain: e.chain, trigger: e.trigger, outcome: e.type === 'trigger:fired' ? 'fired' : e.reason === 'refused' ? 'refused' : 'skipped' });
}
