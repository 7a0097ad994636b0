// Registry figures: argument validation per call for a 5-property object schema of
// scalars (target ≤ 0.3 µs), next to a hand-written validator doing the same checks on a shallow
// copy; and the fixed cost of Tool.invoke (cache/breaker off, result checks on) next to calling
// the handler directly.

import { createRegistry, type ToolContext } from '../src/registry/index.js';
import { nsPerOp, runIfMain, verdict, type BenchResult } from './harness.js';

const parameters = {
  type: 'object',
  properties: {
    city: { type: 'string', minLength: 1 },
    days: { type: 'integer', minimum: 1, maximum: 16, default: 3 },
    unit: { type: 'string', enum: ['metric', 'imperial'], default: 'metric' },
    detailed: { type: 'boolean', default: false },
    lat: { type: 'number' },
  },
  required: ['city'],
  additionalProperties: false,
} as const;

const KEYS = new Set(Object.keys(parameters.properties));

/** What a careful hand-written check of the same schema does, as the baseline. */
function handWritten(args: Record<string, unknown>): { ok: boolean; args: Record<string, unknown> } {
  const copy = { ...args };
  for (const key in copy) if (!KEYS.has(key)) return { ok: false, args };
  if (typeof copy.city !== 'string' || copy.city.length < 1) return { ok: false, args };
  if (copy.days === undefined) copy.days = 3;
  else if (!Number.isInteger(copy.days) || (copy.days as number) < 1 || (copy.days as number) > 16) return { ok: false, args };
  if (copy.unit === undefined) copy.unit = 'metric';
  else if (copy.unit !== 'metric' && copy.unit !== 'imperial') return { ok: false, args };
  if (copy.detailed === undefined) copy.detailed = false;
  else if (typeof copy.detailed !== 'boolean') return { ok: false, args };
  if (copy.lat !== undefined && typeof copy.lat !== 'number') return { ok: false, args };
  return { ok: true, args: copy };
}

export async function benchRegistryValidation(): Promise<BenchResult> {
  const result = { temp: 21.5, unit: 'metric', city: 'Osaka', daily: [{ day: 1, high: 24, low: 17 }] };
  const handler = (): unknown => result;
  const tool = createRegistry().register({ name: 'forecast', parameters, handler });
  const inputs = [
    { city: 'Osaka', days: 4, unit: 'metric', detailed: true, lat: 34.69 },
    { city: 'Kyoto', days: 2, unit: 'imperial', detailed: false, lat: 35.01 },
    { city: 'Nara', days: 7, unit: 'metric', detailed: false, lat: 34.68 },
    { city: 'Kobe', days: 1, unit: 'imperial', detailed: true, lat: 34.69 },
  ];
  for (const input of inputs) if (!tool.prepare(input).ok || !handWritten(input).ok) throw new Error('bench input does not validate');

  const prepareNs = nsPerOp((i) => tool.prepare(inputs[i & 3]!), 2_000_000, 200_000);
  const baselineNs = nsPerOp((i) => handWritten(inputs[i & 3]!), 2_000_000, 200_000);
  const defaultsNs = nsPerOp(() => tool.prepare({ city: 'Osaka' }), 1_000_000, 100_000);

  const ctx: ToolContext = { signal: new AbortController().signal, attempt: 1, run_id: 'bench', step: 's', log: () => undefined, env: {}, idempotencyKey: 'bench:s' };
  const rounds = 200_000;
  const invokeMs = await timeAsync(async () => {
    for (let i = 0; i < rounds; i++) await tool.invoke(inputs[i & 3]!, ctx);
  });
  const directMs = await timeAsync(async () => {
    for (let i = 0; i < rounds; i++) await handler();
  });
  const invokeNs = ((invokeMs - directMs) * 1e6) / rounds;

  return {
    name: 'registry validation',
    lines: [
      `prepare, 5-property schema: ${(prepareNs / 1000).toFixed(3)} µs/call (target ≤ 0.3 µs: ${verdict(prepareNs <= 300)}); ` +
        `baseline hand-written check ${(baselineNs / 1000).toFixed(3)} µs → ${(prepareNs / baselineNs).toFixed(2)}×`,
      `prepare filling 4 defaults: ${(defaultsNs / 1000).toFixed(3)} µs/call`,
      `invoke overhead over a direct handler call (result checks on, cache/breaker off): ${(invokeNs / 1000).toFixed(2)} µs/call`,
    ],
  };
}

async function timeAsync(fn: () => Promise<void>): Promise<number> {
  await fn(); // warm-up
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

await runIfMain(import.meta.url, benchRegistryValidation);
