// Compiler figures: a cold compile of a 200-step chain (≤ 20 ms) and of a 1,000-step one
// (≤ 150 ms), parse included, with no cache of any kind; a cache hit (≤ 20 µs), also with the
// hash taken as the file was read (O(1) in the text's length); and `toolchain validate` on the
// shipped chains as a whole process (≤ 250 ms, median of 5). Baselines: yaml's own parse of the
// same text (the loader reads every file with the yaml library), a Map look-up, and a bare
// `node -e ''` start.

import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { parse } from 'yaml';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { compileChain, createCompileCache } from '../src/index.js';
import { openDiskCache } from '../src/cache/index.js';
import { parseYaml } from '../src/loader/index.js';
import { hashText } from '../src/compiler/compile-chain.js';
import { median, nsPerOp, runIfMain, samplesMs, verdict, type BenchResult } from './harness.js';
import { longChainYaml } from './workloads.js';

const REPO = join(import.meta.dirname, '..', '..');

export async function benchCompiler(): Promise<BenchResult> {
  const text = longChainYaml(200);
  const check = compileChain(text);
  if (!check.plan) throw new Error(`bench chain does not compile: ${JSON.stringify(check.diagnostics)}`);

  // Cold: no compiled plan in memory and no parse result on disk (no cache at all).
  // A warm process with cold caches: enough runs first that the JIT has compiled the parser.
  const cold = median(samplesMs(() => compileChain(text), 100, 30));
  const dir = mkdtempSync(join(tmpdir(), 'toolchain-bench-cache-'));
  const disk = openDiskCache(dir);
  if (!disk) throw new Error(`cannot open a disk cache in ${dir}`);
  compileChain(text, { cache: createCompileCache({ disk }) }); // fills the disk cache
  const coldMemory = median(samplesMs(() => compileChain(text, { cache: createCompileCache({ disk }) }), 40));
  rmSync(dir, { recursive: true, force: true });
  const parseOnly = median(samplesMs(() => parse(text), 100, 30));

  // Distinct but equal strings, as a re-read of an unchanged file gives.
  const copies = Array.from({ length: 8 }, () => Buffer.from(text).toString('utf8'));
  const cache = createCompileCache();
  compileChain(text, { cache });
  const hitNs = nsPerOp((i) => compileChain(copies[i & 7]!, { cache }), 20_000, 1_000);
  const hash = hashText(text);
  const hashHitNs = nsPerOp((i) => compileChain(copies[i & 7]!, { cache, hash }), 20_000, 1_000);
  const thousand = longChainYaml(1_000);
  const thousandCold = median(samplesMs(() => compileChain(thousand), 20, 10));
  const thousandYaml = median(samplesMs(() => parse(thousand), 20, 10));
  const big = longChainYaml(10_000);
  const bigCache = createCompileCache();
  const bigHash = hashText(big);
  compileChain(big, { cache: bigCache, hash: bigHash, maxBytes: 64 << 20 });
  const bigHitNs = nsPerOp(() => compileChain(big.slice(0), { cache: bigCache, hash: bigHash, maxBytes: 64 << 20 }), 20_000, 1_000);
  const bigCold = median(samplesMs(() => compileChain(big, { maxBytes: 64 << 20 }), 3, 1));
  const perStep = (bigCold * 1000) / 10_000;
  // What reading the YAML costs in that, and what the yaml library alone takes for the same text.
  const bigRead = median(samplesMs(() => parseYaml(big, 'big.yaml', { maxBytes: 64 << 20 }), 3, 1));
  const bigYaml = median(samplesMs(() => parse(big), 1, 0));
  const map = new Map([[text, check]]);
  const mapNs = nsPerOp(() => map.get(text), 20_000, 1_000);

  const node = wholeProcessMs(['-e', '']);
  const validate = wholeProcessMs([join(REPO, 'bin', 'toolchain.js'), 'validate']);

  return {
    name: 'compiler',
    lines: [
      `cold compile, 200 steps (${(text.length / 1024).toFixed(1)} KiB): ${cold.toFixed(2)} ms median (target ≤ 20 ms: ${verdict(cold <= 20)}); ` +
        `baseline yaml.parse alone ${parseOnly.toFixed(2)} ms → ${(cold / parseOnly).toFixed(2)}× the bare parse`,
      `compile with an empty memory cache but the parse result on disk (a new process, unchanged file): ${coldMemory.toFixed(2)} ms median`,
      `cache hit: ${(hitNs / 1000).toFixed(2)} µs (target ≤ 20 µs: ${verdict(hitNs <= 20_000)}); baseline Map.get ${(mapNs / 1000).toFixed(3)} µs`,
      `cache hit with the hash known (taken as the file was read): ${(hashHitNs / 1000).toFixed(2)} µs at 200 steps, ${(bigHitNs / 1000).toFixed(2)} µs at 10,000 steps (O(1) in the text's length)`,
      `cold compile, 1,000 steps (${(thousand.length / 1024).toFixed(1)} KiB): ${thousandCold.toFixed(1)} ms median (target ≤ 150 ms: ${verdict(thousandCold <= 150)}); ` +
        `baseline yaml.parse alone ${thousandYaml.toFixed(1)} ms → ${(thousandCold / thousandYaml).toFixed(2)}× the bare parse`,
      `cold compile, 10,000 steps (${(big.length / 1024 / 1024).toFixed(1)} MiB): ${bigCold.toFixed(0)} ms median of 3 → ${perStep.toFixed(0)} µs per step, parse included; ` +
        `of which reading the YAML ${bigRead.toFixed(0)} ms; baseline yaml.parse alone ${bigYaml.toFixed(0)} ms = ${((bigYaml * 1000) / 10_000).toFixed(0)} µs per step`,
      `toolchain validate (shipped chains, whole process): ${validate.toFixed(0)} ms median of 5 (target ≤ 250 ms: ${verdict(validate <= 250)}); ` +
        `baseline node start ${node.toFixed(0)} ms → ${(validate - node).toFixed(0)} ms of our own`,
    ],
  };
}

function wholeProcessMs(args: string[]): number {
  const times: number[] = [];
  for (let i = 0; i < 6; i++) {
    const t = performance.now();
    execFileSync(process.execPath, args, { cwd: REPO, stdio: 'ignore' });
    if (i > 0) times.push(performance.now() - t); // the first run warms the file cache
  }
  return median(times);
}

await runIfMain(import.meta.url, benchCompiler);
