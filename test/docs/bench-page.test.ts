import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BENCHES, performancePage, thisMachine } from '../../bench/performance-page.js';
import { REPO } from '../helpers/run-cli.js';

// docs/internals/performance.md is written by `npm run bench`: its figures carry the date and the
// machine they were taken on, and its headings — which other pages link to — survive a rewrite.

describe('the performance page npm run bench writes', () => {
  it('names the date, the Node version and the machine, and gives each bench its heading and its figures', () => {
    const machine = thisMachine(new Date('2026-12-01T10:00:00Z'));
    const page = performancePage(machine, [
      { name: 'compiler', title: 'Compiling chains', text: 'compiler\n  cold compile: 2.5 ms median\n' },
      { name: 'queue', title: 'Workers on one Redis', text: 'queue\n  partial\n', failure: 'it ended with exit code 1' },
    ]);
    expect(page).toContain(`Measured on 2026-12-01 with Node ${process.version} on ${machine.cpu}, ${machine.cores} cores`);
    expect(machine.cores).toBeGreaterThan(0);
    expect(page).toMatch(/^## Compiling chains\n\n`bench\/compiler\.ts`:\n\n```text\ncompiler\n {2}cold compile: 2\.5 ms median\n```$/m);
    expect(page).toContain('The bench did not finish: it ended with exit code 1.');
    expect(page.startsWith('<!-- Written by `npm run bench`')).toBe(true);
  });

  it("keeps every heading of today's page, so that links into it hold after the next run", async () => {
    const today = await readFile(join(REPO, 'docs/internals/performance.md'), 'utf8');
    const headings = [...today.matchAll(/^## (.+)$/gm)].map((m) => m[1]!);
    expect(headings.length).toBeGreaterThan(5);
    expect(headings.filter((h) => !BENCHES.some((b) => b.title === h))).toEqual([]);
  });
});
