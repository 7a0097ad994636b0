import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadPlugin } from '../../src/plugins/index.js';
import { removeDir, tempDir, writeFiles } from '../fixtures/plugins/helpers.js';

// `handler: tools/x.js#constructor` was accepted: the module's exports object
// inherits `constructor` (Object) from its prototype, so the engine would have called Object as
// the tool. Only a module's own exports are handlers now.

let root: string;
beforeEach(async () => {
  root = await tempDir();
});
afterEach(() => removeDir(root));

describe('inherited names are not handler exports', () => {
  it('#constructor, #toString, #hasOwnProperty, #__proto__ and #call are HANDLER_LOAD', async () => {
    const names = ['constructor', 'toString', 'hasOwnProperty', '__proto__', 'valueOf'];
    await writeFiles(root, {
      'p/plugin.yaml': `name: p\nversion: 1.0.0\ntools:\n${names.map((n, i) => `  - name: t${i}\n    handler: tools/x.cjs#${n}\n`).join('')}  - name: f\n    handler: tools/fn.cjs#call\n`,
      'p/tools/x.cjs': 'module.exports = { real: () => 1 };\n',
      'p/tools/fn.cjs': 'module.exports = function handler() { return 1; };\n',
    });
    const load = await loadPlugin(join(root, 'p'));
    // Each broken tool is left out on its own; the plugin itself loads.
    expect(load.ok).toBe(true);
    if (!load.ok) return;
    const failed = load.plugin.failedTools.map((f) => f.diagnostic);
    expect(failed).toHaveLength(names.length + 1);
    for (const d of failed) expect(d.code).toBe('HANDLER_LOAD');
  });

  it('a tool named like an inherited method does not pick it up from a CommonJS exports object', async () => {
    await writeFiles(root, {
      'p/plugin.yaml': 'name: p\nversion: 1.0.0\ntools:\n  - name: toString\n    handler: tools/x.cjs\n',
      'p/tools/x.cjs': 'module.exports = { nothing_here: 1 };\n',
    });
    const load = await loadPlugin(join(root, 'p'));
    // The tool is left out with HANDLER_LOAD; the plugin itself loads.
    expect(load.ok && load.plugin.tools).toEqual([]);
    expect(load.ok && load.plugin.failedTools.map((f) => f.diagnostic.code)).toEqual(['HANDLER_LOAD']);
  });

  it('own exports with those names still work when the module really has them', async () => {
    await writeFiles(root, {
      'p/plugin.yaml': 'name: p\nversion: 1.0.0\ntools:\n  - name: t\n    handler: tools/x.mjs#valueOf\n',
      'p/tools/x.mjs': 'export function valueOf() { return 42; }\n',
    });
    expect((await loadPlugin(join(root, 'p'))).ok).toBe(true);
  });
});
