import { scanPlaceholders } from '../lib/scan-placeholders.js';
import { toolError } from '../lib/tool-context.js';

// render_template: fills `{{ name }}` placeholders from `values`.
// - A name is a dotted path into values: `{{ city }}`, `{{ facts.population }}`, `{{ list.0 }}`;
//   only own properties are read (no `__proto__`, `constructor`…).
// - Filters after `|`: `number` (thousands separators: 2592413 → 2,592,413), `upper`, `lower`,
//   `trim`, `json`; e.g. `{{ population | number }}`.
// - Strings render as they are, numbers and booleans as text, objects and arrays as JSON.
// - A missing value fails with MISSING_VALUE, naming it, unless `strict` is false (then it
//   renders as nothing).
// - Limits: a template of at most 1,000,000 characters (TEMPLATE_TOO_LARGE) and a result of at
//   most 10,000,000 (OUTPUT_TOO_LARGE: a placeholder repeated over a large value multiplies it).
//   Placeholders are found by a linear scan (lib/scan-placeholders.ts), never a backtracking pattern.
// In a chain, a template written in `input_map` is first filled by the engine (`{{ $.path }}`),
// so this tool's own `{{ name }}` syntax is for templates that arrive as data: a chain input,
// a file, another tool's output.

interface Args {
  readonly template: string;
  readonly values?: Record<string, unknown>;
  readonly strict?: boolean;
}

export const MAX_TEMPLATE_CHARS = 1_000_000;
export const MAX_OUTPUT_CHARS = 10_000_000;
const FILTER_NAME = /^[A-Za-z]+$/;
const NAME = /^[\p{L}\p{N}_$-]+(?:\.[\p{L}\p{N}_$-]+)*$/u;
const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);
const FILTERS: Record<string, (value: unknown) => unknown> = {
  number: (v) => (typeof v === 'number' || (typeof v === 'string' && v.trim() !== '' && !Number.isNaN(Number(v))) ? formatNumber(Number(v)) : v),
  upper: (v) => text(v).toUpperCase(),
  lower: (v) => text(v).toLowerCase(),
  trim: (v) => text(v).trim(),
  json: (v) => JSON.stringify(v ?? null),
};

/**
 * A number as en-US writes it, at most two decimals. A safe integer is grouped by hand, exactly
 * as Intl does ("6,943,207", "-1,234"): creating an Intl.NumberFormat costs 3-5 ms in a fresh
 * process, a large part of a one-shot CLI run. Everything else (fractions, -0, huge numbers,
 * NaN, Infinity) goes through Intl.
 */
function formatNumber(n: number): string {
  if (!Number.isSafeInteger(n) || Object.is(n, -0)) return new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 }).format(n);
  const digits = String(Math.abs(n));
  let out = digits.slice(0, digits.length % 3 || 3);
  for (let i = out.length; i < digits.length; i += 3) out += `,${digits.slice(i, i + 3)}`;
  return n < 0 ? `-${out}` : out;
}

export default async function renderTemplate(args: Args): Promise<{ text: string }> {
  const { template, values = {}, strict = true } = args;
  if (typeof template !== 'string') throw toolError('BAD_ARGUMENT', 'template must be a string');
  if (template.length > MAX_TEMPLATE_CHARS) {
    throw toolError('TEMPLATE_TOO_LARGE', `the template has ${template.length} characters; at most ${MAX_TEMPLATE_CHARS} are rendered`);
  }
  const missing: string[] = [];
  let out = '';
  for (const piece of scanPlaceholders(template)) {
    out += piece.kind === 'text' ? piece.text : fill(piece.body, values, missing);
    if (out.length > MAX_OUTPUT_CHARS) {
      throw toolError('OUTPUT_TOO_LARGE', `the rendered text passes ${MAX_OUTPUT_CHARS} characters; render smaller values or split the template`);
    }
  }
  if (strict && missing.length) {
    const names = [...new Set(missing)];
    const listed = names.slice(0, 10).map((m) => `"${m}"`).join(', ') + (names.length > 10 ? ` and ${names.length - 10} more` : '');
    throw toolError('MISSING_VALUE', `no value for ${listed} in values (which has: ${Object.keys(values).join(', ') || 'nothing'}); pass it in values, or set strict: false`);
  }
  return { text: out };
}

/** One placeholder's text: `name`, then filters each after a `|`. */
function fill(body: string, values: Record<string, unknown>, missing: string[]): string {
  const [rawName = '', ...rawFilters] = body.split('|');
  const name = rawName.trim();
  if (!NAME.test(name)) throw toolError('BAD_TEMPLATE', `"{{ ${shorten(body.trim())} }}" is not a placeholder: use a name or a dotted path such as {{ city }} or {{ facts.population }}`);
  const filters = rawFilters.map((f) => f.trim());
  for (const f of filters) {
    if (!FILTER_NAME.test(f) || !Object.hasOwn(FILTERS, f)) {
      throw toolError('BAD_TEMPLATE', `unknown filter "${shorten(f)}" in "{{ ${name} | ${shorten(f)} }}"; filters are ${Object.keys(FILTERS).join(', ')}`);
    }
  }
  let value = lookup(values, name);
  if (value === undefined || value === null) {
    missing.push(name);
    return '';
  }
  for (const f of filters) value = (FILTERS[f] as (v: unknown) => unknown)(value);
  return text(value);
}

function shorten(s: string): string {
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

function lookup(values: unknown, name: string): unknown {
  let current: unknown = values;
  for (const key of name.split('.')) {
    if (FORBIDDEN.has(key) || current === null || typeof current !== 'object' || !Object.hasOwn(current, key)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

function text(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value === null || value === undefined) return '';
  return JSON.stringify(value);
}
