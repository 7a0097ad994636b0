import { didYouMean, suggestionSuffix } from '../common/errors.js';
import { isRecord, type JsonSchema } from '../common/json.js';
import { parseCron, isTimeZone, timeZones } from '../expr/cron.js';
import { parseWaitDuration } from '../expr/duration.js';
import { compileValue } from '../expr/index.js';
import type { CompiledValue } from '../expr/types.js';
import type { DiagnosticSink } from '../loader/diagnostic-sink.js';
import type { SourceMap } from '../loader/types.js';
import type { ChainInputs, TriggerPlan } from './plan.js';

// A chain's `triggers:` compiled: each cron expression parsed in its zone, each interval read,
// each input checked against the chain's inputs, so that `validate` reports a bad trigger at its
// key and a long-running process never meets one. The schema has checked the shapes already;
// what it refused is not here (dropIllTyped), so this only sees well-typed values.

type RawTrigger = Record<string, unknown>;

export function compileTriggers(raw: unknown, inputs: ChainInputs, sourceMap: SourceMap, sink: DiagnosticSink): TriggerPlan[] {
  if (!Array.isArray(raw)) return [];
  const plans: TriggerPlan[] = [];
  const ids = new Map<string, number>();
  raw.forEach((t: unknown, index) => {
    if (!isRecord(t)) return;
    const plan = compileTrigger(t, index, inputs, sourceMap, sink);
    if (plan === undefined) return;
    const first = ids.get(plan.id);
    if (first !== undefined) sink.error('BAD_TRIGGER', `/triggers/${index}${t.id !== undefined ? '/id' : ''}`, `trigger id '${plan.id}' is used by trigger ${first + 1} too: a trigger's id names its runs, so it must be unique in the chain`);
    else ids.set(plan.id, index);
    plans.push(plan);
  });
  return plans;
}

function compileTrigger(t: RawTrigger, index: number, inputs: ChainInputs, sourceMap: SourceMap, sink: DiagnosticSink): TriggerPlan | undefined {
  const at = `/triggers/${index}`;
  const errorsBefore = sink.diagnostics.length;
  const hasSchedule = typeof t.schedule === 'string';
  const hasEvery = t.every !== undefined;
  if (hasSchedule === hasEvery) {
    sink.error('BAD_TRIGGER', at, hasSchedule ? `trigger ${index + 1} has both 'schedule' and 'every': give one` : `trigger ${index + 1} has neither 'schedule' (cron) nor 'every' (an interval): give one`);
    return undefined;
  }
  let timezone = 'UTC';
  if (typeof t.timezone === 'string') {
    if (!hasSchedule) sink.error('BAD_TRIGGER', `${at}/timezone`, `'timezone' applies to a 'schedule' only: an 'every' interval is counted from the Unix epoch, in no zone`, { atKey: true });
    else if (!isTimeZone(t.timezone)) {
      const suggestion = didYouMean(t.timezone, timeZones());
      sink.error('UNKNOWN_TIMEZONE', `${at}/timezone`, `'${t.timezone}' is not a time zone (IANA names such as Europe/Paris; default UTC)${suggestionSuffix(suggestion)}`, suggestion ? { suggestion } : {});
    } else timezone = t.timezone;
  }
  let everyMs: number | undefined;
  if (hasSchedule) {
    const parsed = parseCron(t.schedule as string, timezone);
    if ('problem' in parsed) sink.error('BAD_CRON', `${at}/schedule`, parsed.problem);
  } else {
    everyMs = parseWaitDuration(t.every);
    if (everyMs === undefined) return undefined; // the schema reported it
    if (everyMs % 1000 !== 0) sink.error('BAD_TRIGGER', `${at}/every`, `'every: ${String(t.every)}' is not a whole number of seconds: a tick is named by its second, so intervals are whole seconds (at least 1s)`);
  }
  if (t.input !== undefined && t.input_map !== undefined) sink.error('BAD_TRIGGER', `${at}/input_map`, `trigger ${index + 1} has both 'input' and 'input_map': give one`, { atKey: true });
  const input = compileInput(t, at, inputs, sink);
  if (sink.diagnostics.slice(errorsBefore).some((d) => d.severity === 'error')) return undefined;
  const pos = sourceMap.valueAt(at);
  return {
    id: typeof t.id === 'string' ? t.id : String(index + 1),
    kind: hasSchedule ? 'schedule' : 'every',
    ...(hasSchedule ? { cron: (t.schedule as string).trim() } : {}),
    timezone,
    ...(everyMs !== undefined ? { everyMs } : {}),
    ...(input ? { input } : {}),
    catchup: (t.catchup as TriggerPlan['catchup'] | undefined) ?? 'latest',
    overlap: (t.overlap as TriggerPlan['overlap'] | undefined) ?? 'skip',
    enabled: t.enabled !== false,
    pointer: at,
    line: pos.line,
    col: pos.col,
  };
}

/** The run's input as a value over `{ tick }`, after checking it fits the chain's inputs. */
function compileInput(t: RawTrigger, at: string, inputs: ChainInputs, sink: DiagnosticSink): CompiledValue | undefined {
  const key = t.input_map !== undefined ? 'input_map' : 'input';
  const given = t[key];
  if (given !== undefined && !isRecord(given)) return undefined;
  const entries = isRecord(given) ? given : {};
  const properties = (inputs.schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = (inputs.schema.required ?? []) as string[];
  for (const [name, value] of Object.entries(entries)) {
    const schema = properties[name];
    if (schema === undefined) {
      const suggestion = didYouMean(name, inputs.names);
      sink.error('TRIGGER_INPUT', `${at}/${key}/${name}`, `the chain has no input '${name}'${suggestionSuffix(suggestion)}${inputs.names.length ? ` (its inputs: ${inputs.names.join(', ')})` : ' (it takes no inputs)'}`, { atKey: true, ...(suggestion ? { suggestion } : {}) });
    } else if (key === 'input' || !(typeof value === 'string' && (value.startsWith('$') || value.includes('{{')))) {
      const wrong = typeProblem(value, schema);
      if (wrong) sink.error('TRIGGER_INPUT', `${at}/${key}/${name}`, `input '${name}' ${wrong}`);
    }
  }
  const missing = required.filter((name) => !(name in entries));
  if (missing.length) sink.error('TRIGGER_INPUT', given === undefined ? at : `${at}/${key}`, `the chain's required input${missing.length > 1 ? 's' : ''} ${missing.map((m) => `'${m}'`).join(', ')} ${missing.length > 1 ? 'are' : 'is'} not given: add ${missing.length > 1 ? 'them' : 'it'} to the trigger's 'input' or 'input_map', or give ${missing.length > 1 ? 'them defaults' : 'it a default'}`);
  if (given === undefined) return undefined;
  if (key === 'input') {
    const value = structuredClone(entries);
    return { get: () => structuredClone(value), refs: [], constant: true, sources: {} };
  }
  const { value, problems } = compileValue(entries, `${at}/input_map`);
  for (const p of problems) sink.error(p.code, `${at}/input_map${p.pointer}`, p.message, p.offset !== undefined ? { offset: p.offset } : {});
  for (const ref of value.refs) {
    if (ref.root !== 'tick') sink.error('TRIGGER_INPUT', `${at}/input_map${ref.pointer}`, `a trigger's input_map reads only the tick ($.tick.at, $.tick.trigger), not ${ref.source}: a run started by a trigger has no steps or inputs to read yet`);
  }
  return value;
}

const JSON_TYPE = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v);

/** What is wrong with a literal against an input's declared `type` (the rest is the run's own input check). */
function typeProblem(value: unknown, schema: JsonSchema): string | undefined {
  const declared = schema.type;
  if (declared === undefined) return undefined;
  const types = Array.isArray(declared) ? (declared as string[]) : [declared as string];
  const actual = JSON_TYPE(value);
  const fits = types.some((type) => type === actual || (type === 'number' && actual === 'integer'));
  return fits ? undefined : `is declared ${types.join(' or ')}, and the trigger gives ${actual} ${JSON.stringify(value)}`;
}
