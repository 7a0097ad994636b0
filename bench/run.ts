// `npm run bench`: every benchmark of the project, one after another in this process (except the
// whole-process figures, which start their own). Each prints its figures next to its baseline.

import type { BenchResult } from './harness.js';
import { benchColdStart } from './cold-start.js';
import { benchCompiler } from './compiler.js';
import { benchDurable } from './durable.js';
import { benchExprPath } from './expr-path.bench.js';
import { benchExecutor } from './executor.js';
import { benchExecutorScale } from './executor-scale.js';
import { benchIsolation } from './isolation.js';
import { benchLlmMcp } from './llm-mcp.js';
import { benchLlmParse } from './llm-parse.js';
import { benchRegistryValidation } from './registry-validation.js';
import { benchReloadLatency } from './reload-latency.js';
import { benchReloadMemory } from './reload-memory.js';
import { benchQueue } from './queue.js';
import { benchServe } from './serve.js';
import { benchStore } from './store.js';

const benches: (() => Promise<BenchResult>)[] = [
  benchCompiler,
  benchExprPath,
  benchExecutor,
  benchExecutorScale,
  benchIsolation,
  benchRegistryValidation,
  benchReloadLatency,
  benchReloadMemory,
  benchColdStart,
  benchLlmParse,
  benchLlmMcp,
  benchServe,
  benchStore,
  benchDurable,
  benchQueue,
];

for (const bench of benches) {
  const { name, lines } = await bench();
  console.log(name);
  for (const line of lines) console.log(`  ${line}`);
}
