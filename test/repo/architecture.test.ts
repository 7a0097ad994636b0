import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileGraph, folderCycles, folderGraph, folderOf, importedNames, runtimeImports, sourceFiles, SRC } from '../architecture/import-graph.js';

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
    const importersOf = (folder: string, of = graph): string[] => [...of].filter(([, edges]) => edges.has(folder)).map(([from]) => from).sort();
    // Directly in src/ are the package's entries and nothing else; no folder imports them.
    const top = sourceFiles().filter((f) => folderOf(f) === '.').map((f) => relative(SRC, f)).sort();
    expect(top).toEqual(['index.ts', 'plugin.ts']);
    expect(importersOf('.')).toEqual([]);
    // The engine runs for the public entry and the CLI; serve takes one by its type; nothing else reaches it.
    expect(importersOf('engine')).toEqual(['.', 'cli']);
    expect(importersOf('engine', folderGraph(true))).toEqual(['.', 'cli', 'serve']);
    // The library entry does not pull in the CLI.
    const entry = runtimeImports(`${SRC}/index.ts`).map(folderOf);
    expect(entry).not.toContain('cli');
  });

  it('has no import cycle between folders when type imports count too', () => {
    // Types point the way code does: the types store, observe, queue and serve share live below them.
    expect(folderCycles(folderGraph(true))).toEqual([]);
  });

  it('keeps the run model below everyone who shares it: it imports only common, and store and observe nothing of the executor', () => {
    // Records, results, events and the recorder contract are run-model/'s; a layer that only keeps
    // or reads runs takes them from there, type imports included.
    const typed = folderGraph(true);
    expect([...typed.get('run-model')!].filter((to) => to !== 'common')).toEqual([]);
    expect(importedNames('store', 'executor')).toEqual([]);
    expect(importedNames('observe', 'executor')).toEqual([]);
  });

  it('lets queue and serve take from the executor only what they drive with it', () => {
    // A queue worker works out a distributed element's arguments as the run does and has it called
    // (queue/distribute.ts); the server starts runs with the executor's RunOptions. Nothing else:
    // what they share with the executor is the run model's (docs/internals/architecture.md).
    expect(importedNames('queue', 'executor')).toEqual(['DistributedElement', 'Distributor', 'ElementOutcome', 'ElementSource', 'elementArgs', 'elementSource']);
    expect(importedNames('serve', 'executor')).toEqual(['RunOptions']);
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
