import { join } from 'node:path';
import { hasErrors, type Diagnostic } from '../common/errors.js';
import type { DiskCache } from '../cache/disk-cache.js';
import { loadYamlFile, type SourceMap } from '../loader/index.js';
import { checkManifestSchema } from './check-manifest-schema.js';
import type { ToolchainPluginManifest } from './manifest.generated.js';
import { parseRequirement, type Requirement } from './parse-requirement.js';
import { checkSource } from './sources/check-source.js';

// plugin.yaml → a checked manifest: safe YAML (size, depth and alias limits, no prototype keys),
// the schema, then what a schema cannot say (semver ranges, tool names used twice). Every
// problem is collected, each with its file, line and column.

export const MANIFEST_FILE = 'plugin.yaml';

export type PluginManifest = ToolchainPluginManifest;

export interface ReadManifest {
  readonly file: string;
  readonly manifest?: PluginManifest;
  readonly requirements: readonly Requirement[];
  readonly sourceMap?: SourceMap;
  readonly diagnostics: readonly Diagnostic[];
}

function at(file: string, sourceMap: SourceMap, pointer: string, code: Diagnostic['code'], message: string): Diagnostic {
  const { line, col } = sourceMap.valueAt(pointer);
  return { code, severity: 'error', message, file, pointer, line, col };
}

/** `dir` is the plugin folder as the caller names it; diagnostics name `dir/plugin.yaml`. `cache` keeps the parse. */
export async function readManifest(dir: string, cache?: DiskCache): Promise<ReadManifest> {
  const file = join(dir, MANIFEST_FILE);
  const loaded = await loadYamlFile(file, undefined, cache);
  const document = loaded.document;
  if (!document || hasErrors(loaded.diagnostics)) return { file, requirements: [], diagnostics: loaded.diagnostics };
  const { sourceMap } = document;
  const diagnostics: Diagnostic[] = [...loaded.diagnostics, ...checkManifestSchema(document.value, file, sourceMap)];
  if (hasErrors(diagnostics)) return { file, requirements: [], sourceMap, diagnostics };

  const manifest = document.value as PluginManifest;
  const requirements: Requirement[] = [];
  (manifest.requires ?? []).forEach((source, index) => {
    const parsed = parseRequirement(source);
    if (parsed.ok) requirements.push({ ...parsed.requirement, ...sourceMap.valueAt(`/requires/${index}`) });
    else diagnostics.push(at(file, sourceMap, `/requires/${index}`, 'BAD_SEMVER', parsed.message));
  });
  const seen = new Map<string, number>();
  (manifest.tools ?? []).forEach((tool, index) => {
    const first = seen.get(tool.name);
    if (first !== undefined) {
      diagnostics.push(at(file, sourceMap, `/tools/${index}/name`, 'DUPLICATE_NAME', `tool '${tool.name}' is defined twice (first at tools[${first}])`));
    } else {
      seen.set(tool.name, index);
    }
  });
  diagnostics.push(...checkSource(manifest, file, sourceMap));
  if (hasErrors(diagnostics)) return { file, requirements: [], sourceMap, diagnostics };
  return { file, manifest, requirements, sourceMap, diagnostics };
}
