import { didYouMean, suggestionSuffix } from '../common/errors.js';
import { isRecord, type JsonSchema } from '../common/json.js';
import { parseCron, isTimeZone, timeZones } from '../expr/cron.js';
import { parseDuration, parseWaitDuration } from '../expr/duration.js';
import { compileValue } from '../expr/index.js';
import type { CompiledValue } from '../expr/types.js';
import type { DiagnosticSink } from '../loader/diagnostic-sink.js';
import type { SourceMap } from '../loader/types.js';
import type { ChainInputs, TriggerKind, TriggerPlan, WebhookPlan } from './plan.js';

// A chain's `triggers:` compiled: each cron expression parsed in its zone, each interval read,
// each event's match and each webhook's signature settings checked, each input checked against
// the chain's inputs, so that `validate` reports a bad trigger at its key and a long-running
// process never meets one. The schema has checked the shapes already; what it refused is not
// here (dropIllTyped), so this only sees well-typed values.

type RawTrigger = Record<string, unknown>;

const KINDS: readonly TriggerKind[] = ['schedule', 'every', 'event', 'webhook'];

/** What `$.event` holds, by kind: what an input_map may read. */
const EVENT_FIELDS: Readonly<Record<'event' | 'webhook', readonly string[]>> = {
  event: ['name', 'id', 'payload'],
  webhook: ['name', 'id', 'type', 'payload', 'headers'],
};

/** A webhook's largest body unless it says (1 MiB). */
export const DEFAULT_WEBHOOK_BODY_BYTES = 1024 * 1024;
/** How far a Stripe signature's timestamp may be from the clock unless the trigger says (Stripe's own libraries' default). */
export const DEFAULT_STRIPE_TOLERANCE_MS = 300_000;

export function compileTriggers(raw: unknown, inputs: ChainInputs, sourceMap: SourceMap, sink: DiagnosticSink): TriggerPlan[] {
  if (!Array.isArray(raw)) return [];
  const plans: TriggerPlan[] = [];
  const ids = new Map<string, number>();
  const paths = new Map<string, number>();
  raw.forEach((t: unknown, index) => {
    if (!isRecord(t)) return;
    const plan = compileTrigger(t, index, inputs, sourceMap, sink);
    if (plan === undefined) return;
    const first = ids.get(plan.id);
    if (first !== undefined) sink.error('BAD_TRIGGER', `/triggers/${index}${t.id !== undefined ? '/id' : ''}`, `trigger id '${plan.id}' is used by trigger ${first + 1} too: a trigger's id names its runs, so it must be unique in the chain`);
    else ids.set(plan.id, index);
    if (plan.webhook !== undefined) {
      const other = paths.get(plan.webhook.path);
      if (other !== undefined) sink.error('BAD_TRIGGER', `/triggers/${index}/webhook/path`, `webhook path '${plan.webhook.path}' is declared by trigger ${other + 1} too: a path is served by one trigger`);
      else paths.set(plan.webhook.path, index);
    }
    plans.push(plan);
  });
  return plans;
}

function compileTrigger(t: RawTrigger, index: number, inputs: ChainInputs, sourceMap: SourceMap, sink: DiagnosticSink): TriggerPlan | undefined {
  const at = `/triggers/${index}`;
  const errorsBefore = sink.diagnostics.length;
  const given = KINDS.filter((k) => t[k] !== undefined);
  if (given.length !== 1) {
    const list = KINDS.map((k) => `'${k}'`).join(', ');
    sink.error('BAD_TRIGGER', at, given.length > 1 ? `trigger ${index + 1} has ${given.map((k) => `'${k}'`).join(' and ')}: a trigger is one kind, give one of ${list}` : `trigger ${index + 1} has none of ${list}: give one (when it runs)`);
    return undefined;
  }
  const kind = given[0]!;
  const ticks = kind === 'schedule' || kind === 'every';
  let timezone = 'UTC';
  if (typeof t.timezone === 'string') {
    if (kind !== 'schedule') sink.error('BAD_TRIGGER', `${at}/timezone`, kind === 'every' ? `'timezone' applies to a 'schedule' only: an 'every' interval is counted from the Unix epoch, in no zone` : `'timezone' applies to a 'schedule' only: a${kind === 'event' ? 'n event' : ' webhook'} trigger fires when it arrives`, { atKey: true });
    else if (!isTimeZone(t.timezone)) {
      const suggestion = didYouMean(t.timezone, timeZones());
      sink.error('UNKNOWN_TIMEZONE', `${at}/timezone`, `'${t.timezone}' is not a time zone (IANA names such as Europe/Paris; default UTC)${suggestionSuffix(suggestion)}`, suggestion ? { suggestion } : {});
    } else timezone = t.timezone;
  }
  let everyMs: number | undefined;
  if (kind === 'schedule') {
    const parsed = parseCron(t.schedule as string, timezone);
    if ('problem' in parsed) sink.error('BAD_CRON', `${at}/schedule`, parsed.problem);
  } else if (kind === 'every') {
    everyMs = parseWaitDuration(t.every);
    if (everyMs === undefined) return undefined; // the schema reported it
    if (everyMs % 1000 !== 0) sink.error('BAD_TRIGGER', `${at}/every`, `'every: ${String(t.every)}' is not a whole number of seconds: a tick is named by its second, so intervals are whole seconds (at least 1s)`);
  }
  const match = compileMatch(t, kind, at, sink);
  const webhook = kind === 'webhook' ? compileWebhook(t.webhook, at, sourceMap, sink) : undefined;
  if (kind === 'webhook') {
    for (const key of ['catchup', 'overlap'] as const) {
      if (t[key] !== undefined) sink.error('BAD_TRIGGER', `${at}/${key}`, key === 'catchup' ? `'catchup' does not apply to a webhook: nothing is missed while no server runs, its sender delivers again` : `'overlap' does not apply to a webhook: each delivery starts its run (its sender waits for the answer)`, { atKey: true });
    }
  }
  if (t.input !== undefined && t.input_map !== undefined) sink.error('BAD_TRIGGER', `${at}/input_map`, `trigger ${index + 1} has both 'input' and 'input_map': give one`, { atKey: true });
  const input = compileInput(t, kind, at, inputs, sink);
  if (sink.diagnostics.slice(errorsBefore).some((d) => d.severity === 'error')) return undefined;
  const pos = sourceMap.valueAt(at);
  return {
    id: typeof t.id === 'string' ? t.id : String(index + 1),
    kind,
    ...(kind === 'schedule' ? { cron: (t.schedule as string).trim() } : {}),
    timezone,
    ...(everyMs !== undefined ? { everyMs } : {}),
    ...(kind === 'event' ? { event: t.event as string } : {}),
    ...(match !== undefined ? { match } : {}),
    ...(webhook !== undefined ? { webhook } : {}),
    ...(input ? { input } : {}),
    // Each event is work of its own (an order created): missed ones all fire, and at once by default.
    catchup: kind === 'webhook' ? 'none' : ((t.catchup as TriggerPlan['catchup'] | undefined) ?? (ticks ? 'latest' : 'all')),
    overlap: kind === 'webhook' ? 'allow' : ((t.overlap as TriggerPlan['overlap'] | undefined) ?? (ticks ? 'skip' : 'allow')),
    enabled: t.enabled !== false,
    pointer: at,
    line: pos.line,
    col: pos.col,
  };
}

/** An event trigger's `match`: literals only (a trigger has no run whose values it could read). */
function compileMatch(t: RawTrigger, kind: TriggerKind, at: string, sink: DiagnosticSink): Readonly<Record<string, unknown>> | undefined {
  if (t.match === undefined) return undefined;
  if (kind !== 'event') {
    sink.error('BAD_TRIGGER', `${at}/match`, `'match' applies to an 'event' trigger only: it picks the events of the name whose payload fits`, { atKey: true });
    return undefined;
  }
  if (!isRecord(t.match)) return undefined;
  const { value, problems } = compileValue(t.match, `${at}/match`);
  for (const p of problems) sink.error(p.code, `${at}/match${p.pointer}`, p.message, p.offset !== undefined ? { offset: p.offset } : {});
  for (const ref of value.refs) {
    sink.error('BAD_TRIGGER', `${at}/match${ref.pointer}`, `a trigger's match compares the payload with literals, not ${ref.source}: there is no run to read it from when the event arrives (write $$ for a literal '$')`);
  }
  return value.refs.length === 0 && problems.length === 0 ? (value.get({}) as Record<string, unknown>) : undefined;
}

function compileWebhook(raw: unknown, at: string, sourceMap: SourceMap, sink: DiagnosticSink): WebhookPlan | undefined {
  if (!isRecord(raw) || typeof raw.path !== 'string' || typeof raw.signature !== 'string' || typeof raw.secret_env !== 'string') return undefined; // the schema reported it
  const w = `${at}/webhook`;
  const signature = raw.signature as WebhookPlan['signature'];
  const secretEnv = raw.secret_env;
  if (secretEnv.toUpperCase().startsWith('TOOLCHAIN_')) sink.error('BAD_TRIGGER', `${w}/secret_env`, `${secretEnv} is one of toolchain's own variables (a serve token, a store address), which never serves as a webhook's secret: name a variable of its own, such as GITHUB_WEBHOOK_SECRET`);
  const only = (key: string, wanted: WebhookPlan['signature'], why: string): void => {
    if (raw[key] !== undefined && signature !== wanted) sink.error('BAD_TRIGGER', `${w}/${key}`, `'${key}' applies to signature ${wanted} only (${why}), and this one is ${signature}`, { atKey: true });
  };
  only('header', 'hmac-sha256', 'github and stripe sign in headers of their own');
  only('id_header', 'hmac-sha256', 'github names its deliveries in X-GitHub-Delivery, stripe in the event\'s id');
  only('tolerance', 'stripe', 'only a Stripe signature carries a timestamp');
  if (signature === 'hmac-sha256' && typeof raw.header !== 'string') sink.error('BAD_TRIGGER', w, `signature hmac-sha256 needs 'header': the request header that carries the signature (such as X-Signature)`);
  const toleranceMs = raw.tolerance !== undefined ? parseDuration(raw.tolerance) : DEFAULT_STRIPE_TOLERANCE_MS;
  if (toleranceMs === undefined) return undefined; // the schema reported it
  const pos = sourceMap.valueAt(`${w}/path`);
  const secretPos = sourceMap.valueAt(`${w}/secret_env`);
  return {
    path: raw.path,
    signature,
    secretEnv,
    ...(typeof raw.header === 'string' ? { header: raw.header.toLowerCase() } : {}),
    ...(typeof raw.id_header === 'string' ? { idHeader: raw.id_header.toLowerCase() } : {}),
    toleranceMs,
    maxBodyBytes: typeof raw.max_body_bytes === 'number' ? raw.max_body_bytes : DEFAULT_WEBHOOK_BODY_BYTES,
    pathLine: pos.line,
    pathCol: pos.col,
    secretLine: secretPos.line,
    secretCol: secretPos.col,
  };
}

/** The run's input as a value over `{ tick }` or `{ event }`, after checking it fits the chain's inputs. */
function compileInput(t: RawTrigger, kind: TriggerKind, at: string, inputs: ChainInputs, sink: DiagnosticSink): CompiledValue | undefined {
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
  const ticks = kind === 'schedule' || kind === 'every';
  for (const ref of value.refs) {
    const pointer = `${at}/input_map${ref.pointer}`;
    if (ticks) {
      if (ref.root !== 'tick') sink.error('TRIGGER_INPUT', pointer, `a trigger's input_map reads only the tick ($.tick.at, $.tick.trigger), not ${ref.source}: a run started by a trigger has no steps or inputs to read yet`);
      continue;
    }
    const fields = EVENT_FIELDS[kind as 'event' | 'webhook'];
    if (ref.root !== 'event') {
      sink.error('TRIGGER_INPUT', pointer, `a${kind === 'event' ? 'n event' : ' webhook'} trigger's input_map reads only the event (${fields.map((f) => `$.event.${f}`).join(', ')}), not ${ref.source}: a run started by a trigger has no steps or inputs to read yet`);
      continue;
    }
    const field = eventField(ref.source);
    if (field !== undefined && !fields.includes(field)) {
      const suggestion = didYouMean(field, fields);
      sink.error('TRIGGER_INPUT', pointer, `${ref.source} reads '${field}', which a${kind === 'event' ? 'n event' : ' webhook delivery'} does not have (it has ${fields.join(', ')})${suggestionSuffix(suggestion)}`, suggestion ? { suggestion: `$.event.${suggestion}` } : {});
    }
  }
  return value;
}

/** The member of `$.event` a path reads first (`payload` of `$.event.payload.order`), when it names one. */
function eventField(source: string): string | undefined {
  const m = /^\$\.event(?:\.([A-Za-z_][A-Za-z0-9_]*)|\[\s*(?:'([^']*)'|"([^"]*)")\s*\])/.exec(source.trim());
  return m === null ? undefined : (m[1] ?? m[2] ?? m[3]);
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
