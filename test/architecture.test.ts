import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileGraph, folderCycles, folderGraph, folderOf, runtimeImports, sourceFiles, SRC } from './architecture/import-graph.js';

// The shape of src/ (docs/internals/architecture.md): folders whose runtime imports only point down, and
// small hand-written files.

describe('architecture', () => {
  const graph = folderGraph();

  it('has no runtime import cycle between folders', () => {
    expect(folderCycles(graph)).toEqual([]);
  });

  it('has no runtime import cycle between files', () => {
    // Folders have none, so a cycle of files would be inside one folder. Such a cycle makes the
    // order modules load in matter, and sends a reader round in circles.
    const cycles = [...graph.keys()].flatMap((folder) => folderCycles(fileGraph(folder)));
    expect(cycles).toEqual([]);
  });

  it('keeps the layers: common imports nothing; the executor never imports llm; nothing below the engine imports it', () => {
    expect([...graph.get('common')!]).toEqual([]);
    expect([...graph.get('executor')!]).not.toContain('llm');
    expect([...graph.get('call')!].sort()).toEqual(['common']);
    const intoTheTop = [...graph].filter(([folder, edges]) => edges.has('.') && folder !== 'cli' && folder !== 'serve').map(([folder]) => folder);
    expect(intoTheTop).toEqual([]);
    // Only the public entry and the engine sit at the top; the library entry does not pull in the CLI.
    const entry = runtimeImports(`${SRC}/index.ts`).map(folderOf);
    expect(entry).not.toContain('cli');
  });

  it('has no import cycle between folders when type imports count too', () => {
    // Types point the way code does: the types store, observe, queue and serve share live below them.
    expect(folderCycles(folderGraph(true))).toEqual([]);
  });

  it('opens every hand-written source file with a comment saying what it owns', () => {
    // One concept per file, said at the top; not a line count, which shaped splits in the past.
    const silent = sourceFiles()
      .filter((f) => !f.endsWith('.generated.ts'))
      .filter((f) => !/^\s*(\/\/|\/\*\*|\*)/m.test(readFileSync(f, 'utf8').split('\n').slice(0, 30).join('\n')))
      .map((f) => relative(SRC, f));
    expect(silent).toEqual([]);
  });
});
