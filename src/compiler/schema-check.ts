import type { ErrorObject } from 'ajv';
import type { ErrorCode } from '../common/errors.js';
import { describeKind, didYouMean, suggestionSuffix } from '../common/errors.js';
import { validateChainFile } from '../schemas/validators.js';
import { childPointer, pointerTokens, valueAtPointer } from '../common/json-pointer.js';
import type { DiagnosticSink } from '../loader/diagnostic-sink.js';
import { unknownKey } from '../schemas/unknown-key.js';
import { isRecord } from '../common/json.js';
import { DURATION_RULE, WAIT_DURATION_RULE } from '../expr/duration.js';

// The chain schema is the source of truth for the shape of a chain file: the compiler checks it
// with ajv, then turns ajv's errors into diagnostics a person can act on (one per problem, with
// did-you-mean for unknown keys) instead of ajv's cascade of oneOf/anyOf branch failures.

/** Reports every schema problem of a chain document into `sink`; returns ajv's errors (none: it passed). */
export function checkChainSchema(value: unknown, sink: DiagnosticSink): readonly ErrorObject[] {
  const validate = validateChainFile;
  if (validate(value)) return [];
  const errors = [...(validate.errors ?? [])];
  const add: Add = (code, pointer, message, atKey = false, suggestion) =>
    sink.error(code, pointer, message, { atKey, ...(suggestion ? { suggestion } : {}) });
  for (const e of errors) describe(e, value, add);
  return errors;
}

const STEP_KINDS = ['tool', 'chain', 'agent', 'sleep', 'sleep_until', 'wait_for', 'approval'];

type Add = (code: ErrorCode, pointer: string, message: string, atKey?: boolean, suggestion?: string) => void;

function describe(e: ErrorObject, root: unknown, add: Add): void {
  const at = e.instancePath;
  const where = describePointer(root, at);
  const sp = e.schemaPath;
  if (sp.includes('/definitions/duration')) {
    add('BAD_DURATION', at, `${where} is not a duration (${JSON.stringify(valueAtPointer(root, at))}): expected ${DURATION_RULE}`);
    return;
  }
  if (sp.includes('/definitions/waitDuration')) {
    add('BAD_DURATION', at, `${where} is not a duration (${JSON.stringify(valueAtPointer(root, at))}): expected ${WAIT_DURATION_RULE}`);
    return;
  }
  if (/^\/steps\/\d+\/repeat\/max_attempts$/.test(at) && (e.keyword === 'minimum' || e.keyword === 'maximum')) {
    add('BAD_VALUE', at, `${where} must be a whole number of rounds from 1 to 10000, got ${JSON.stringify(valueAtPointer(root, at))}`);
    return;
  }
  if (sp.includes('/definitions/stepKind')) {
    const step = valueAtPointer(root, at);
    const kinds = isRecord(step) ? STEP_KINDS.filter((k) => k in step) : [];
    if (kinds.length > 1) add('BAD_VALUE', at, `step ${stepName(step)} has ${kinds.map((k) => `'${k}'`).join(' and ')}: a step does exactly one of ${STEP_KINDS.join(', ')}`);
    else add('MISSING_KEY', at, `step ${stepName(step)} needs 'tool' (a tool to call), 'chain' (a chain to run), 'agent' (a model to ask), or a wait: 'sleep', 'sleep_until', 'wait_for' (an event) or 'approval' (a person)`);
    return;
  }
  // The compensate definition is compiled on its own: its schema paths start at its own root.
  if (/\/compensate$/.test(at) && (sp.startsWith('#/oneOf') || sp.includes('/definitions/compensate/oneOf'))) {
    if (e.keyword !== 'oneOf') return; // each branch's complaint: said once below
    const c = valueAtPointer(root, at);
    const both = isRecord(c) && 'tool' in c && 'chain' in c;
    add(both ? 'BAD_VALUE' : 'MISSING_KEY', at, `${where} ${both ? "has both 'tool' and 'chain'" : "has neither 'tool' nor 'chain'"}: a compensation calls exactly one tool or runs one chain`);
    return;
  }
  if (/^\/inputs\/[^/]+$/.test(at) && (sp.includes('/definitions/input') || sp.includes('/definitions/typeName'))) {
    const given = valueAtPointer(root, at);
    const types = ['string', 'number', 'integer', 'boolean', 'object', 'array'];
    const suggestion = typeof given === 'string' ? didYouMean(given, types) : undefined;
    add('BAD_TYPE', at, `input ${where} must be a type name (${types.join(', ')}) or a JSON Schema object${suggestionSuffix(suggestion)}`, false, suggestion);
    return;
  }
  // The same words as compile-step, which finds these too: the sink keeps one of each.
  if (e.keyword === 'dependencies') {
    const prop = String((e.params as { property?: string }).property);
    add('BAD_VALUE', childPointer(at, prop), `step ${stepName(valueAtPointer(root, at))} sets ${prop} without ${String((e.params as { missingProperty?: string }).missingProperty)}`);
    return;
  }
  if (e.keyword === 'if') return; // reported by the 'not' below it
  if (e.keyword === 'not' && sp.endsWith('/then/not')) {
    add('BAD_VALUE', childPointer(at, 'input_map'), `step ${stepName(valueAtPointer(root, at))} is an agent: its message comes from agent.prompt (a template or JSONPath), not input_map`);
    return;
  }
  switch (e.keyword) {
    case 'additionalProperties': {
      const u = unknownKey(e, where);
      add('UNKNOWN_KEY', u.pointer, u.message, true, u.suggestion);
      return;
    }
    case 'required': {
      const key = String((e.params as { missingProperty: string }).missingProperty);
      add('MISSING_KEY', at, `${where} is missing the required key '${key}'`);
      return;
    }
    case 'propertyNames':
      return; // reported by the 'pattern' error on the name itself
    case 'pattern': {
      if (sp.includes('/definitions/name')) {
        // A name that breaks `propertyNames` is the key itself: ajv names it in e.propertyName.
        const propertyName = e.propertyName;
        const pointer = propertyName === undefined ? at : childPointer(at, propertyName);
        const name = propertyName ?? String(e.data);
        add('BAD_NAME', pointer, `'${name}' is not a valid name: use a letter or underscore, then letters, digits and underscores`, propertyName !== undefined);
      } else {
        add('BAD_VALUE', at, `${where} ${e.message ?? 'is invalid'}`);
      }
      return;
    }
    case 'type': {
      const expected = String((e.params as { type: string }).type);
      // `version: 0.1`, `name: yes`: YAML read an unquoted scalar as a number or boolean.
      const quote = expected === 'string' && (typeof e.data === 'number' || typeof e.data === 'boolean') ? `: YAML reads ${String(e.data)} unquoted as ${withArticle(typeof e.data)}; put the value in quotes to keep it as text` : '';
      add('BAD_TYPE', at, `${where} must be ${withArticle(expected)}, not ${describeKind(e.data)}${quote}`);
      return;
    }
    case 'enum': {
      const allowed = (e.params as { allowedValues: unknown[] }).allowedValues;
      const suggestion = typeof e.data === 'string' ? didYouMean(e.data, allowed.map(String)) : undefined;
      add('BAD_VALUE', at, `${where} must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}${suggestionSuffix(suggestion)}`, false, suggestion);
      return;
    }
    case 'minItems':
      add('BAD_VALUE', at, `${where} must not be empty`);
      return;
    default:
      add('SCHEMA_INVALID', at, `${where} ${e.message ?? 'is invalid'}`);
  }
}

/** `/steps/2/retry/backoff/initial` → `step 'clock' retry.backoff.initial`: how a person names the node. */
function describePointer(root: unknown, pointer: string): string {
  if (pointer === '') return 'the chain';
  const parts = pointerTokens(pointer);
  if ((parts[0] === 'steps' || parts[0] === 'on_failure' || parts[0] === 'finally') && parts[1] !== undefined) {
    const step = stepName(valueAtPointer(root, `/${parts[0]}/${parts[1]}`));
    const rest = parts.slice(2).join('.');
    const what = parts[0] === 'steps' ? 'step' : `${parts[0]} step`;
    return rest ? `${rest} of ${what} ${step}` : `${what} ${step}`;
  }
  return `'${parts.join('.')}'`;
}

function stepName(step: unknown): string {
  return isRecord(step) && typeof step.name === 'string' ? `'${step.name}'` : '(unnamed)';
}

function withArticle(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

