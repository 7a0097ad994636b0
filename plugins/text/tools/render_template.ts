import { toolError } from '../lib/tool-context.js';

// render_template: fills `{{ name }}` placeholders from `values`.
// - A name is a dotted path into values: `{{ city }}`, `{{ facts.population }}`, `{{ list.0 }}`;
//   only own properties are read (no `__proto__`, `constructor`…).
// - Filters after `|`: `number` (thousands separators: 2592413 → 2,592,413), `upper`, `lower`,
//   `trim`, `json`; e.g. `{{ population | number }}`.
// - Strings render as they are, numbers and booleans as text, objects and arrays as JSON.
// - A missing value fails with MISSING_VALUE, naming it, unless `strict` is false (then it
//   renders as nothing).
// In a chain, a template written in `input_map` is first filled by the engine (`{{ $.path }}`),
// so this tool's own `{{ name }}` syntax is for templates that arrive as data: a chain input,
// a file, another tool's output.

interface Args {
  readonly template: string;
  readonly values?: Record<string, unknown>;
  readonly strict?: boolean;
}

const PLACEHOLDER = /\{\{\s*([^{}|]*?)\s*((?:\|\s*[A-Za-z]+\s*)*)\}\}/g;
const NAME = /^[\p{L}\p{N}_$-]+(?:\.[\p{L}\p{N}_$-]+)*$/u;
const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);
const FILTERS: Record<string, (value: unknown) => unknown> = {
  number: (v) => (typeof v === 'number' || (typeof v === 'string' && v.trim() !== '' && !Number.isNaN(Number(v))) ? new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 }).format(Number(v)) : v),
  upper: (v) => text(v).toUpperCase(),
  lower: (v) => text(v).toLowerCase(),
  trim: (v) => text(v).trim(),
  json: (v) => JSON.stringify(v ?? null),
};

export default async function renderTemplate(args: Args): Promise<{ text: string }> {
  const { template, values = {}, strict = true } = args;
  if (typeof template !== 'string') throw toolError('BAD_ARGUMENT', 'template must be a string');
  const missing: string[] = [];
  const out = template.replace(PLACEHOLDER, (_whole, rawName: string, rawFilters: string) => {
    const name = rawName.trim();
    if (!NAME.test(name)) throw toolError('BAD_TEMPLATE', `"{{ ${name} }}" is not a placeholder: use a name or a dotted path such as {{ city }} or {{ facts.population }}`);
    const filters = rawFilters.split('|').map((f) => f.trim()).filter((f) => f !== '');
    for (const f of filters) {
      if (!FILTERS[f]) throw toolError('BAD_TEMPLATE', `unknown filter "${f}" in "{{ ${name} | ${f} }}"; filters are ${Object.keys(FILTERS).join(', ')}`);
    }
    let value = lookup(values, name);
    if (value === undefined || value === null) {
      missing.push(name);
      return '';
    }
    for (const f of filters) value = (FILTERS[f] as (v: unknown) => unknown)(value);
    return text(value);
  });
  if (strict && missing.length) {
    throw toolError('MISSING_VALUE', `no value for ${missing.map((m) => `"${m}"`).join(', ')} in values (which has: ${Object.keys(values).join(', ') || 'nothing'}); pass it in values, or set strict: false`);
  }
  return { text: out };
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
