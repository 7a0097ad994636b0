// A realistic plugin to reload in the reload benchmarks: a manifest with three tools, TypeScript
// handlers with types and a shared local module, rewritten with a new version on every reload.

import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export async function makePluginsDir(): Promise<{ root: string; plugin: string }> {
  const root = await mkdtemp(join(tmpdir(), 'toolchain-reload-bench-'));
  const plugin = join(root, 'geo');
  await mkdir(join(plugin, 'tools'), { recursive: true });
  await writeFile(join(plugin, 'tools', 'lib.ts'), LIB);
  await writeVersion(plugin, 0);
  return { root, plugin };
}

/** Rewrite the manifest and the handlers as version 1.0.<n>, whose tools answer `n`. */
export async function writeVersion(plugin: string, n: number): Promise<void> {
  await writeFile(join(plugin, 'tools', 'where.ts'), handler(n));
  await writeFile(join(plugin, 'plugin.yaml'), manifest(n));
}

export async function writeHandler(plugin: string, n: number): Promise<void> {
  await writeFile(join(plugin, 'tools', 'where.ts'), handler(n));
}

const LIB = `export interface City { readonly name: string; readonly lat: number; readonly lon: number }
export const CITIES: readonly City[] = [
  { name: 'Osaka', lat: 34.69, lon: 135.5 },
  { name: 'Kyoto', lat: 35.01, lon: 135.77 },
  { name: 'Tokyo', lat: 35.68, lon: 139.69 },
];
export function find(text: string): City | undefined {
  const lower = text.toLowerCase();
  return CITIES.find((c) => lower.includes(c.name.toLowerCase()));
}
`;

function handler(n: number): string {
  return `import { find, type City } from './lib.js';
interface Args { readonly text?: string; readonly unit?: 'metric' | 'imperial' }
const VERSION = ${n};
export async function where(args: Args): Promise<{ version: number; city: City | null }> {
  return { version: VERSION, city: find(args.text ?? '') ?? null };
}
export async function distance(args: { from: string; to: string }): Promise<{ version: number; km: number }> {
  const a = find(args.from);
  const b = find(args.to);
  if (!a || !b) throw Object.assign(new Error('unknown city'), { code: 'NOT_FOUND' });
  return { version: VERSION, km: Math.round(Math.hypot(a.lat - b.lat, a.lon - b.lon) * 111) };
}
export default where;
`;
}

function manifest(n: number): string {
  return `name: geo
version: 1.0.${n}
description: Reload benchmark plugin.
tools:
  - name: where
    description: Find the city a text names.
    handler: tools/where.ts#where
    parameters:
      type: object
      properties:
        text: { type: string }
        unit: { type: string, enum: [metric, imperial], default: metric }
  - name: distance
    description: Distance between two cities.
    handler: tools/where.ts#distance
    parameters:
      type: object
      properties: { from: { type: string }, to: { type: string } }
      required: [from, to]
    cache: { ttl: 10m }
  - name: fallback_where
    description: The default export.
    handler: tools/where.ts
    circuit_breaker: { failures: 3, reset_after: 30s }
`;
}
