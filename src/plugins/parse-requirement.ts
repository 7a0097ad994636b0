import semver from 'semver';

// `requires` entries: a plugin or capability name, then an optional semver range —
// `text`, `text >= 1.0.0`, `text ^1.2`, `text 1.x || 2.x`.

export interface Requirement {
  readonly name: string;
  /** The range as written ('*' when none was given). */
  readonly range: string;
  readonly source: string;
  /** Where the manifest writes it (for diagnostics). */
  readonly line?: number;
  readonly col?: number;
}

export type ParsedRequirement = { readonly ok: true; readonly requirement: Requirement } | { readonly ok: false; readonly message: string };

const SHAPE = /^\s*([A-Za-z_][A-Za-z0-9_-]*)\s*(.*?)\s*$/;

export function parseRequirement(source: string): ParsedRequirement {
  const match = SHAPE.exec(source);
  if (!match) return { ok: false, message: `requirement '${source}' must be a name, optionally followed by a semver range (text >= 1.0.0)` };
  const name = match[1]!;
  const range = match[2] === '' ? '*' : match[2]!;
  if (semver.validRange(range) === null) {
    return { ok: false, message: `requirement '${source}': '${range}' is not a semver range (try >= 1.0.0, ^1.2 or 1.x)` };
  }
  return { ok: true, requirement: { name, range, source } };
}
