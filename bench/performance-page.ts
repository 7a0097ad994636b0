import { cpus, totalmem, type } from 'node:os';

// docs/internals/performance.md as `npm run bench` writes it: every bench's printed figures under
// a heading of its own, with the date, the Node version and the machine they were taken on, so
// that a reader knows what the figures are worth on another day and another machine.

/** Each bench and the heading its figures get on the performance page (other pages link to the anchors). */
export const BENCHES: readonly { readonly name: string; readonly title: string }[] = [
  { name: 'compiler', title: 'Compiling chains' },
  { name: 'expr-path.bench', title: 'JSONPaths' },
  { name: 'executor', title: 'The executor' },
  { name: 'executor-scale', title: 'The executor at scale' },
  { name: 'isolation', title: 'Plugin isolation' },
  { name: 'registry-validation', title: 'Argument validation' },
  { name: 'reload-latency', title: 'Hot reload latency' },
  { name: 'reload-memory', title: 'Hot reload memory' },
  { name: 'cold-start', title: 'Cold start' },
  { name: 'llm-parse', title: 'Calls in text' },
  { name: 'llm-mcp', title: 'MCP' },
  { name: 'openapi-load', title: 'OpenAPI documents' },
  { name: 'serve', title: 'The HTTP server' },
  { name: 'store', title: 'Run stores' },
  { name: 'durable', title: 'Durable runs' },
  { name: 'waits', title: 'Runs that wait' },
  { name: 'queue', title: 'Workers on one Redis' },
];

export interface BenchOutput {
  /** The bench's file name in bench/ (without .ts). */
  readonly name: string;
  /** The page's heading for it; its anchor is what other pages link to. */
  readonly title: string;
  /** What it printed on stdout. */
  readonly text: string;
  /** Why it did not finish normally (an exit code, a signal), if it did not. */
  readonly failure?: string;
}

export interface Machine {
  readonly date: string;
  readonly node: string;
  readonly cpu: string;
  readonly cores: number;
  readonly os: string;
  readonly memoryGiB: number;
}

export function thisMachine(now = new Date()): Machine {
  const list = cpus();
  return {
    date: now.toISOString().slice(0, 10),
    node: process.version,
    cpu: list[0]?.model.trim() ?? 'unknown CPU',
    cores: list.length,
    os: type(),
    memoryGiB: Math.round(totalmem() / 2 ** 30),
  };
}

const METHOD = `Every figure is printed next to a hand-written TypeScript baseline of the same work, measured
in the same process in interleaved rounds (so that a GC pause or a slower moment hits both sides),
and each bench runs in a fresh process. Lines end with \`ok\` or \`MISSES TARGET\` where the bench
has a target. Tools are no-op functions with a JSON Schema on every one: arguments and results are
validated as in any run. Machines differ from day to day, so judge a change by running both builds
side by side — alternating separate processes pinned to one core (\`taskset -c 1\`), several of
each — and comparing medians; the figures below say what one run of \`npm run bench\` measured.`;

export function performancePage(machine: Machine, outputs: readonly BenchOutput[]): string {
  const lines = [
    '<!-- Written by `npm run bench` (bench/run.ts): run it to update this page, do not edit it by hand. -->',
    '',
    '# Performance',
    '',
    `Measured on ${machine.date} with Node ${machine.node} on ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB (${machine.os}).`,
    '',
    METHOD,
    '',
  ];
  for (const out of outputs) {
    lines.push(`## ${out.title}`, '', `\`bench/${out.name}.ts\`:`, '', '```text', out.text.replace(/\s+$/, ''), '```', '');
    if (out.failure !== undefined) lines.push(`The bench did not finish: ${out.failure}.`, '');
  }
  return `${lines.join('\n').replace(/\n+$/, '')}\n`;
}
