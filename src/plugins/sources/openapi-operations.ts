import { createRefs, RefError, type Refs } from './openapi-refs.js';
import { createSchemaConverter, type SchemaConverter } from './openapi-schema.js';

// The operations of a resolved OpenAPI 3.x or Swagger 2.0 document, each with what a tool needs:
// its arguments (path, query, header and cookie parameters under their own names — a name two
// of them share, or `body`, gets its location in front: `query_id` — and the request body as
// one `body` argument), its success response's JSON schema, and how to send it. The body is one
// argument rather than flattened: it may be an array or a scalar, its keys may meet parameter
// names, and a model sees the same shape the API documents. Webhooks (3.1) are not operations.
// Path items, parameters, bodies and responses may be `$ref`s: followed as they are read; one that
// resolves nowhere throws RefError, naming the operation.

type Obj = Record<string, unknown>;

export type ParamLocation = 'path' | 'query' | 'header' | 'cookie';

export interface OperationParam {
  /** The argument's name. */
  readonly arg: string;
  /** The parameter's name on the wire. */
  readonly name: string;
  readonly in: ParamLocation;
  readonly style?: string;
  readonly explode?: boolean;
}

export interface Operation {
  readonly method: string;
  readonly path: string;
  readonly operationId?: string;
  readonly tags: readonly string[];
  readonly deprecated: boolean;
  readonly description: string;
  readonly params: readonly OperationParam[];
  /** How the body is sent, when the operation takes one. */
  readonly body?: { readonly contentType: 'json' | 'form'; readonly mediaType: string };
  readonly parameters: Obj;
  readonly returns?: Obj;
  /** Why this operation cannot be a tool (a multipart body, say). */
  readonly unsupported?: string;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];
const JSON_MEDIA = /^application\/(?:[\w.+-]+\+)?json\b|^\*\/\*$|^application\/\*$/i;
const FORM_MEDIA = /^application\/x-www-form-urlencoded\b/i;
const DESCRIPTION_LIMIT = 1024;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** How the document is read: its `$ref`s, and one schema converter for all its operations. */
interface Reading {
  readonly doc: Obj;
  readonly swagger: boolean;
  readonly refs: Refs;
  readonly schemas: SchemaConverter;
}

export function listOperations(doc: Obj): Operation[] {
  const refs = createRefs(doc);
  const reading: Reading = { doc, swagger: doc.swagger === '2.0', refs, schemas: createSchemaConverter(refs) };
  const out: Operation[] = [];
  const paths = isObj(doc.paths) ? doc.paths : {};
  for (const [path, entry] of Object.entries(paths)) {
    const item = resolved(reading, entry, () => path);
    if (!item) continue;
    const shared = objects(reading, item.parameters, () => path);
    for (const method of METHODS) {
      const op = item[method];
      if (!isObj(op)) continue;
      out.push(operation(method.toUpperCase(), path, op, shared, reading));
    }
  }
  return out;
}

/** The object `value` stands for (its `$ref` followed), or undefined when it is none; a broken reference names where it was met. */
function resolved(reading: Reading, value: unknown, where: () => string): Obj | undefined {
  try {
    const v = reading.refs.resolve(value);
    return isObj(v) ? v : undefined;
  } catch (error) {
    if (error instanceof RefError) throw new RefError(`${error.message} (in ${where()})`);
    throw error;
  }
}

function objects(reading: Reading, list: unknown, where: () => string): Obj[] {
  if (!Array.isArray(list)) return [];
  return list.flatMap((p): Obj[] => {
    const o = resolved(reading, p, where);
    return o ? [o] : [];
  });
}

/** A schema converted, a broken reference in it naming where it was met. */
function converted(reading: Reading, schema: unknown, where: () => string): Obj {
  try {
    return reading.schemas.convert(schema);
  } catch (error) {
    if (error instanceof RefError) throw new RefError(`${error.message} (in ${where()})`);
    throw error;
  }
}

function operation(method: string, path: string, op: Obj, shared: readonly Obj[], reading: Reading): Operation {
  const { swagger, doc } = reading;
  const where = (): string => `${method} ${path}`;
  const own = objects(reading, op.parameters, where);
  const byKey = new Map<string, Obj>();
  for (const p of [...shared, ...own]) if (typeof p.name === 'string' && typeof p.in === 'string') byKey.set(`${p.in}:${p.name}`, p);
  const plain = [...byKey.values()].filter((p) => ['path', 'query', 'header', 'cookie'].includes(p.in as string));
  const counts = new Map<string, number>();
  for (const p of plain) counts.set(argName(p.name as string), (counts.get(argName(p.name as string)) ?? 0) + 1);
  const properties: Obj = {};
  const required: string[] = [];
  const params: OperationParam[] = [];
  for (const p of plain) {
    const base = argName(p.name as string);
    const arg = (counts.get(base) ?? 0) > 1 || base === 'body' ? `${p.in as string}_${base}` : base;
    const schema = paramSchema(reading, p, where);
    properties[arg] = typeof p.description === 'string' ? described(schema, p.description) : schema;
    if (p.required === true || p.in === 'path') required.push(arg);
    params.push({ arg, name: p.name as string, in: p.in as ParamLocation, ...(typeof p.style === 'string' ? { style: p.style } : {}), ...(typeof p.explode === 'boolean' ? { explode: p.explode } : {}) });
  }
  let body: Operation['body'];
  let unsupported: string | undefined;
  const requestBody = swagger ? swaggerBody(reading, byKey, op, doc, where) : requestBodyOf(reading, resolved(reading, op.requestBody, where), where);
  if (requestBody && 'unsupported' in requestBody) unsupported = requestBody.unsupported;
  else if (requestBody) {
    body = { contentType: requestBody.contentType, mediaType: requestBody.mediaType };
    const schema = converted(reading, requestBody.schema, where);
    properties.body = requestBody.description ? { ...schema, description: requestBody.description } : schema;
    if (requestBody.required) required.push('body');
  }
  const returns = successSchema(reading, op, where);
  const words = [op.summary, op.description].filter((t): t is string => typeof t === 'string' && t.trim() !== '').map((t) => t.trim());
  const text = [...new Set(words)].join('\n\n') || `${method} ${path}`;
  return {
    method,
    path,
    ...(typeof op.operationId === 'string' && op.operationId !== '' ? { operationId: op.operationId } : {}),
    tags: Array.isArray(op.tags) ? op.tags.filter((t): t is string => typeof t === 'string') : [],
    deprecated: op.deprecated === true,
    description: text.length > DESCRIPTION_LIMIT ? `${text.slice(0, DESCRIPTION_LIMIT - 3)}...` : text,
    params,
    ...(body ? { body } : {}),
    parameters: { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false },
    ...(returns ? { returns } : {}),
    ...(unsupported ? { unsupported } : {}),
  };
}

/** A parameter's schema with the parameter's description, unless the schema has its own (a note the converter made, on a pattern or a format, is kept after it). */
function described(schema: Obj, description: string): Obj {
  if (schema.description === undefined) return { ...schema, description };
  if (typeof schema.description === 'string' && /^(?:pattern|format): /.test(schema.description)) return { ...schema, description: `${description} (${schema.description})` };
  return schema;
}

/** A parameter name as an argument: what Anthropic accepts in a property name. */
function argName(name: string): string {
  return name.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 64) || '_';
}

function paramSchema(reading: Reading, p: Obj, where: () => string): Obj {
  if (!reading.swagger) {
    if (p.schema !== undefined) return converted(reading, p.schema, where);
    if (isObj(p.content)) {
      const first = Object.values(p.content).find(isObj);
      if (first && first.schema !== undefined) return converted(reading, first.schema, where);
    }
    return {};
  }
  // Swagger 2.0 keeps the type on the parameter itself.
  const { name: _n, in: _i, required: _r, description: _d, collectionFormat: _c, allowEmptyValue: _a, ...rest } = p;
  return converted(reading, rest, where);
}

type Body = { contentType: 'json' | 'form'; mediaType: string; schema: unknown; required: boolean; description?: string } | { unsupported: string };

function requestBodyOf(reading: Reading, rb: Obj | undefined, where: () => string): Body | undefined {
  if (!rb) return undefined;
  const content = isObj(rb.content) ? rb.content : {};
  const required = rb.required === true;
  const description = typeof rb.description === 'string' ? rb.description : undefined;
  const types = Object.keys(content);
  if (types.length === 0) return undefined;
  const json = types.find((t) => JSON_MEDIA.test(t));
  const form = types.find((t) => FORM_MEDIA.test(t));
  const picked = json ?? form;
  if (!picked) return { unsupported: `its request body is ${types.join(' or ')}, and only JSON and form (x-www-form-urlencoded) bodies are sent` };
  const media = resolved(reading, content[picked], where);
  return { contentType: json ? 'json' : 'form', mediaType: picked, schema: media?.schema, required, ...(description ? { description } : {}) };
}

function swaggerBody(reading: Reading, params: ReadonlyMap<string, Obj>, op: Obj, doc: Obj, where: () => string): Body | undefined {
  const all = [...params.values()];
  const body = all.find((p) => p.in === 'body');
  if (body) return { contentType: 'json', mediaType: 'application/json', schema: body.schema, required: body.required === true, ...(typeof body.description === 'string' ? { description: body.description } : {}) };
  const fields = all.filter((p) => p.in === 'formData');
  if (fields.length === 0) return undefined;
  const consumes = (Array.isArray(op.consumes) ? op.consumes : Array.isArray(doc.consumes) ? doc.consumes : []) as string[];
  if (fields.some((f) => f.type === 'file') || consumes.some((c) => /multipart/i.test(c))) return { unsupported: 'it takes a multipart form (a file upload), which is not sent' };
  const properties: Obj = {};
  const required: string[] = [];
  for (const f of fields) {
    properties[f.name as string] = paramSchema(reading, f, where);
    if (f.required === true) required.push(f.name as string);
  }
  return { contentType: 'form', mediaType: 'application/x-www-form-urlencoded', schema: { type: 'object', properties, ...(required.length ? { required } : {}) }, required: required.length > 0 };
}

/** The JSON schema of the first success response (2xx in order, then 2XX) that has one. */
function successSchema(reading: Reading, op: Obj, where: () => string): Obj | undefined {
  const responses = resolved(reading, op.responses, where) ?? {};
  const codes = Object.keys(responses).filter((c) => /^2\d\d$/.test(c)).sort();
  if (responses['2XX'] !== undefined) codes.push('2XX');
  for (const code of codes) {
    const r = resolved(reading, responses[code], where);
    if (!r) continue;
    if (reading.swagger) {
      if (isObj(r.schema)) return converted(reading, r.schema, where);
      continue;
    }
    const content = isObj(r.content) ? r.content : {};
    const json = Object.keys(content).find((t) => JSON_MEDIA.test(t));
    const media = json ? resolved(reading, content[json], where) : undefined;
    if (media && isObj(media.schema)) return converted(reading, media.schema, where);
  }
  return undefined;
}
