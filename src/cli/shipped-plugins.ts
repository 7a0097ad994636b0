import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { cp } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import semver from 'semver';
import { didYouMean, suggestionSuffix, ToolchainError } from '../common/errors.js';
import { isRecord } from '../common/json.js';
import { parseYaml } from '../loader/index.js';
import { parseRequirement } from '../plugins/parse-requirement.js';
import { schemasDirectory } from '../schemas/schema-files.js';

// The plugins that ship in the package's plugins/ folder, and copying them into a project
// (`toolchain init --shipped geo,http`). A shipped plugin names the packages it imports in a
// package.json of its own. The copy brings them along: each, and what each depends on, is copied
// from the engine's own installation (whose package.json names them too, so they are installed
// with it) into the copied plugin's node_modules, laid out as `npm install` there would. So the
// copied folder resolves its imports on its own — offline, with no install step, wherever and
// however the engine is installed (in the project, globally, or not at all any more).

export function shippedPluginsDirectory(): string {
  return join(dirname(schemasDirectory()), 'plugins');
}

/** The shipped plugins' names (their folders), sorted. */
export function shippedPluginNames(): string[] {
  const dir = shippedPluginsDirectory();
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => existsSync(join(dir, name, 'plugin.yaml')))
    .sort();
}

/** `geo,http` (or `all`) as shipped plugin names; an unknown one is USAGE with the closest name. */
export function parseShippedNames(list: string): string[] {
  const shipped = shippedPluginNames();
  const names = list
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  if (names.length === 1 && names[0] === 'all') return shipped;
  for (const name of names) {
    if (shipped.includes(name)) continue;
    throw new ToolchainError('USAGE', `--shipped ${name}: no plugin of that name ships with toolchain${suggestionSuffix(didYouMean(name, shipped))}; shipped: ${shipped.join(', ')} (or all)`);
  }
  if (names.length === 0) throw new ToolchainError('USAGE', `--shipped takes plugin names separated by commas, or all; shipped: ${shipped.join(', ')}`);
  return [...new Set(names)];
}

/** What a shipped plugin's manifest says of it: its capabilities and the names it requires. */
function manifestFacts(name: string): { capabilities: string[]; requires: string[] } {
  const file = join(shippedPluginsDirectory(), name, 'plugin.yaml');
  const value = parseYaml(readFileSync(file, 'utf8'), file).document?.value;
  const list = (key: string): unknown[] => (isRecord(value) && Array.isArray(value[key]) ? (value[key] as unknown[]) : []);
  const requires = list('requires').flatMap((r) => {
    const parsed = typeof r === 'string' ? parseRequirement(r) : undefined;
    return parsed?.ok ? [parsed.requirement.name] : [];
  });
  return { capabilities: list('capabilities').filter((c): c is string => typeof c === 'string'), requires };
}

/**
 * The names asked for, then the shipped plugins they require (by name or capability) that are
 * neither asked for nor in the plugins folder already (`present`), each with who requires it.
 */
export function withRequirements(names: readonly string[], present: (name: string) => boolean): { readonly names: string[]; readonly requiredBy: ReadonlyMap<string, string> } {
  const shipped = shippedPluginNames();
  const provider = new Map<string, string>();
  for (const plugin of shipped) for (const key of [plugin, ...manifestFacts(plugin).capabilities]) if (!provider.has(key)) provider.set(key, plugin);
  const out = [...names];
  const requiredBy = new Map<string, string>();
  for (let i = 0; i < out.length; i++) {
    for (const need of manifestFacts(out[i]!).requires) {
      const plugin = provider.get(need);
      if (plugin === undefined || out.includes(plugin) || present(plugin)) continue;
      out.push(plugin);
      requiredBy.set(plugin, out[i]!);
    }
  }
  return { names: out, requiredBy };
}

interface PackageJson {
  readonly name?: string;
  readonly version?: string;
  readonly dependencies?: Record<string, string>;
  readonly peerDependencies?: Record<string, string>;
  readonly peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  readonly optionalDependencies?: Record<string, string>;
}

function readPackage(dir: string): PackageJson {
  return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as PackageJson;
}

/** Where Node finds package `name` from `from`: the first node_modules/NAME on the way up. */
function findPackage(name: string, from: string): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', ...name.split('/'));
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}

export interface CopiedPlugin {
  readonly name: string;
  /** `city-timezones@1.3.4`, … — the packages copied into its node_modules. */
  readonly packages: readonly string[];
}

/** Copies shipped plugin `name` to `target` (which must not exist), with the packages it imports. */
export async function copyShippedPlugin(name: string, target: string): Promise<CopiedPlugin> {
  const source = join(shippedPluginsDirectory(), name);
  await cp(source, target, { recursive: true, errorOnExist: true, force: false, filter: (path) => !relative(source, path).split(sep).some((part) => part === 'node_modules' || part.startsWith('.')) });
  if (!existsSync(join(source, 'package.json'))) return { name, packages: [] };
  const own = readPackage(source);
  const copied = new Map<string, string>();
  const wanted: { name: string; range: string | undefined; from: string; optional: boolean }[] = Object.entries(own.dependencies ?? {}).map(([dep, range]) => ({ name: dep, range, from: source, optional: false }));
  while (wanted.length > 0) {
    const next = wanted.shift()!;
    const found = findPackage(next.name, next.from);
    if (found === undefined) {
      if (next.optional) continue;
      throw new ToolchainError('USAGE', `shipped plugin '${name}' imports package '${next.name}', which this installation of toolchain lacks (it installs the shipped plugins' packages with itself): reinstall toolchain`);
    }
    const real = realpathSync(found);
    const pkg = readPackage(real);
    const version = pkg.version ?? '0.0.0';
    if (next.range !== undefined && next.from === source && !semver.satisfies(version, next.range)) {
      throw new ToolchainError('USAGE', `shipped plugin '${name}' needs ${next.name} ${next.range}, and this installation of toolchain has ${version}: reinstall toolchain`);
    }
    if (copied.has(next.name)) continue; // one copy of each package, the first one found
    copied.set(next.name, version);
    // Its own node_modules (packages nested for it) comes along; the rest it needs are found as Node would, from where it is installed.
    await cp(real, join(target, 'node_modules', ...next.name.split('/')), { recursive: true, dereference: true, errorOnExist: false, force: true });
    const peers = Object.entries(pkg.peerDependencies ?? {}).map(([dep, range]) => ({ dep, range, optional: pkg.peerDependenciesMeta?.[dep]?.optional === true }));
    const deps = [...Object.entries(pkg.dependencies ?? {}).map(([dep, range]) => ({ dep, range, optional: false })), ...Object.entries(pkg.optionalDependencies ?? {}).map(([dep, range]) => ({ dep, range, optional: true })), ...peers];
    for (const { dep, optional } of deps) {
      if (existsSync(join(real, 'node_modules', ...dep.split('/'), 'package.json'))) continue;
      wanted.push({ name: dep, range: undefined, from: real, optional });
    }
  }
  return { name, packages: [...copied].map(([pkg, version]) => `${pkg}@${version}`) };
}
