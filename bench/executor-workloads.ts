// The executor's four benchmark workloads, each as a chain and as the hand-written async
// TypeScript that does the same work: the baseline the engine's overhead is measured against.

import type { ToolDefinition } from '../src/registry/types.js';

export interface Workload {
  readonly name: string;
  readonly yaml: string;
  /** Steps per run, for the per-step overhead. */
  readonly steps: number;
  readonly input: Record<string, unknown>;
  /** The same work as plain async code calling the same handlers. */
  readonly baseline: () => Promise<unknown>;
  readonly expected: unknown;
}

type N = { n: number };
const inc = async (args: Record<string, unknown>): Promise<N> => ({ n: (args.n as number) + 1 });
const sum = async (args: Record<string, unknown>): Promise<N> => ({ n: (args.values as number[]).reduce((a, b) => a + b, 0) });
const nap = (ms: number) => async (args: Record<string, unknown>): Promise<N> => {
  await new Promise((r) => setTimeout(r, ms));
  return { n: (args.n as number) + 1 };
};

const N_SCHEMA = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'], additionalProperties: false } as const;
const VALUES_SCHEMA = { type: 'object', properties: { values: { type: 'array', items: { type: 'integer' } } }, required: ['values'] } as const;

export const benchTools: readonly ToolDefinition[] = [
  { name: 'inc', parameters: N_SCHEMA, handler: inc },
  { name: 'sum', parameters: VALUES_SCHEMA, handler: sum },
  { name: 'nap20', parameters: N_SCHEMA, handler: nap(20) },
];

function linear10(): Workload {
  let yaml = 'name: linear10\ninputs: { n: integer }\nsteps:\n';
  for (let i = 0; i < 10; i++) yaml += `  - name: s${i}\n    tool: inc\n    input_map: { n: ${i ? `$.s${i - 1}.n` : '$.n'} }\n`;
  yaml += 'outputs: { n: $.s9.n }\n';
  return {
    name: 'linear10',
    yaml,
    steps: 10,
    input: { n: 0 },
    expected: { n: 10 },
    baseline: async () => {
      let r: N = { n: 0 };
      for (let i = 0; i < 10; i++) r = await inc({ n: r.n });
      return { n: r.n };
    },
  };
}

function diamond(): Workload {
  const yaml = `name: diamond
inputs: { n: integer }
steps:
  - { name: a, tool: inc, input_map: { n: $.n } }
  - { name: b, tool: inc, parallel: true, input_map: { n: $.a.n } }
  - { name: c, tool: inc, parallel: true, input_map: { n: $.a.n } }
  - { name: d, tool: inc, parallel: true, input_map: { n: $.a.n } }
  - { name: e, tool: sum, input_map: { values: [$.b.n, $.c.n, $.d.n] } }
outputs: { n: $.e.n }
`;
  return {
    name: 'diamond',
    yaml,
    steps: 5,
    input: { n: 0 },
    expected: { n: 6 },
    baseline: async () => {
      const a = await inc({ n: 0 });
      const [b, c, d] = await Promise.all([inc({ n: a.n }), inc({ n: a.n }), inc({ n: a.n })]);
      return { n: (await sum({ values: [b.n, c.n, d.n] })).n };
    },
  };
}

function fanout(width: number, tool: 'inc' | 'nap20', name: string): Workload {
  let yaml = `name: ${name}\ninputs: { n: integer }\nsteps:\n  - { name: root, tool: inc, input_map: { n: $.n } }\n`;
  for (let i = 0; i < width; i++) yaml += `  - { name: p${i}, tool: ${tool}, parallel: true, input_map: { n: $.root.n } }\n`;
  yaml += `  - name: join\n    tool: sum\n    input_map:\n      values: [${Array.from({ length: width }, (_, i) => `$.p${i}.n`).join(', ')}]\n`;
  yaml += 'outputs: { n: $.join.n }\n';
  const handler = tool === 'inc' ? inc : nap(20);
  return {
    name,
    yaml,
    steps: width + 2,
    input: { n: 0 },
    expected: { n: width * 2 },
    baseline: async () => {
      const root = await inc({ n: 0 });
      const parts = await Promise.all(Array.from({ length: width }, () => handler({ n: root.n })));
      return { n: (await sum({ values: parts.map((p) => p.n) })).n };
    },
  };
}

export const workloads = {
  fanout,
  linear10,
  diamond,
  fanout100: () => fanout(100, 'inc', 'fanout100'),
  sleepy8: () => fanout(8, 'nap20', 'sleepy8'),
};
