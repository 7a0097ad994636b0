import type { ToolHandler } from '../registry/types.js';

// Which export of a handler module is the tool. Named with `file#export`; otherwise the first
// function among: the module itself (CommonJS `module.exports = fn`), `default`, an export named
// like the tool, `handler`.

export type PickedExport = { readonly ok: true; readonly handler: ToolHandler } | { readonly ok: false; readonly message: string };

function exportNames(exports: unknown): string {
  const names = typeof exports === 'object' && exports !== null ? Object.keys(exports).filter((k) => k !== '__esModule') : [];
  return names.length > 0 ? names.join(', ') : 'none';
}

export function pickExport(exports: unknown, toolName: string, exportName: string | undefined): PickedExport {
  // Own exports only: `#constructor`, `#toString` or `#call` would otherwise find Object's or
  // Function's inherited methods, and the engine would call them as the tool.
  const get = (key: string): unknown =>
    exports !== null && (typeof exports === 'object' || typeof exports === 'function') && Object.hasOwn(exports, key)
      ? (exports as Record<string, unknown>)[key]
      : undefined;
  if (exportName !== undefined) {
    const named = get(exportName);
    if (typeof named === 'function') return { ok: true, handler: named as ToolHandler };
    return { ok: false, message: `the module has no function export '${exportName}' (its exports: ${exportNames(exports)})` };
  }
  if (typeof exports === 'function') return { ok: true, handler: exports as ToolHandler };
  for (const key of ['default', toolName, 'handler']) {
    const candidate = get(key);
    if (typeof candidate === 'function') return { ok: true, handler: candidate as ToolHandler };
  }
  return {
    ok: false,
    message: `the module exports no handler function: export a default function, or one named '${toolName}', or write 'file#export' (its exports: ${exportNames(exports)})`,
  };
}
