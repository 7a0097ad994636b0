import { Composer, LineCounter, Parser, type Document } from 'yaml';
import type { Diagnostic } from '../common/errors.js';
import { findDepthViolation } from './depth-check.js';
import { loadDiagnostic, START } from './diagnostic.js';
import { walkDocument, type DocumentFacts } from './document-walk.js';
import { cacheKey, type DiskCache } from '../cache/disk-cache.js';
import { resolveLimits } from './limits.js';
import { toPlainValue } from './safe-value.js';
import { OffsetSourceMap, positionAt } from './source-map.js';
import type { LoadLimits, LoadResult } from './types.js';

/**
 * Parses one YAML document safely. `document` is present whenever a value could be built
 * (duplicate keys, forbidden keys and extra documents still leave a usable first document, so
 * later stages can add their own diagnostics); it is absent after size, depth, alias or syntax
 * errors, where any value would be a guess. With a `cache` (a DiskCache, see openUserCache),
 * the result is kept there by content hash and a later parse of the same text reads it back;
 * without one nothing is written anywhere.
 */
export function parseYaml(text: string, file: string, limits?: Partial<LoadLimits>, cache?: DiskCache): LoadResult {
  const lim = resolveLimits(limits);
  // Size first: a huge text is refused before it is hashed, let alone parsed.
  if (!cache || text.length > lim.maxBytes) return parseUncached(text, file, lim).result;
  const key = cacheKey(CACHE_FORMAT, String(lim.maxBytes), String(lim.maxDepth), String(lim.maxAliases), text);
  const cached = cache.read('yaml', key);
  if (cached !== undefined) {
    const hit = fromCache(cached, text, file);
    if (hit) return hit;
  }
  const { result, facts, lineCounter } = parseUncached(text, file, lim);
  const entry = toCache(result, facts, lineCounter);
  if (entry !== undefined) cache.write('yaml', key, entry);
  return result;
}

interface Parsed {
  readonly result: LoadResult;
  readonly facts?: DocumentFacts;
  readonly lineCounter?: LineCounter;
}

function parseUncached(text: string, file: string, lim: LoadLimits): Parsed {
  // text.length is a lower bound on UTF-8 bytes, so the O(n) byte count only runs on plausible sizes.
  if (text.length > lim.maxBytes || Buffer.byteLength(text, 'utf8') > lim.maxBytes) {
    return { result: { diagnostics: [loadDiagnostic('FILE_TOO_LARGE', `larger than the limit of ${lim.maxBytes} bytes`, file, START)] } };
  }

  // The depth check lexes the text anyway; its tokens feed the parser so the text is lexed once.
  const tokens: string[] = [];
  const tooDeep = findDepthViolation(text, lim.maxDepth, tokens);
  if (tooDeep) {
    return { result: { diagnostics: [loadDiagnostic('YAML_LIMIT', `collections nested deeper than ${lim.maxDepth} levels`, file, tooDeep)] } };
  }

  const lineCounter = new LineCounter();
  let docs: Document[];
  try {
    docs = parseTokens(tokens, lineCounter);
  } catch (error) {
    // yaml reports problems as data; a throw here is a bug or an exhausted stack, not user input.
    return { result: { diagnostics: [loadDiagnostic('YAML_LIMIT', `YAML could not be parsed: ${messageOf(error)}`, file, START)] } };
  }

  const at = (offset: number) => positionAt(lineCounter, offset);
  const diagnostics: Diagnostic[] = [];
  let fatal = false;

  const first: Document | undefined = docs[0];
  const facts: DocumentFacts | undefined = first ? walkDocument(first, text) : undefined;
  const sourceMap = new OffsetSourceMap(facts?.values ?? new Map(), facts?.keys ?? new Map(), lineCounter);

  for (const doc of docs) {
    for (const error of doc.errors) {
      const offset = error.pos[0];
      if (error.code === 'DUPLICATE_KEY') {
        const pointer = doc === first ? sourceMap.pointerOfKeyAt(offset) : undefined;
        diagnostics.push(loadDiagnostic('YAML_DUPLICATE_KEY', 'duplicate key: map keys must be unique', file, at(offset), pointer));
      } else {
        fatal = true;
        diagnostics.push(loadDiagnostic('YAML_SYNTAX', error.message, file, at(offset)));
      }
    }
    for (const warning of doc.warnings) {
      diagnostics.push(loadDiagnostic('YAML_SYNTAX', warning.message, file, at(warning.pos[0]), undefined, 'warning'));
    }
  }

  const second = docs[1];
  if (second) {
    diagnostics.push(
      loadDiagnostic('YAML_MULTI_DOCUMENT', 'a file holds exactly one YAML document; a second one starts here', file, at(second.range?.[0] ?? 0)),
    );
  }

  if (facts) {
    for (const f of facts.forbidden) {
      diagnostics.push(loadDiagnostic('FORBIDDEN_KEY', `the key '${f.key}' is not allowed`, file, at(f.offset), f.pointer));
    }
    if (facts.unresolvedAlias) {
      fatal = true;
      const a = facts.unresolvedAlias;
      diagnostics.push(loadDiagnostic('YAML_SYNTAX', `alias *${a.name} has no anchor &${a.name} before it`, file, at(a.offset), a.pointer));
    }
    if (facts.recursiveAlias) {
      fatal = true;
      const a = facts.recursiveAlias;
      diagnostics.push(
        loadDiagnostic('YAML_LIMIT', `alias *${a.name} refers to a node that contains it`, file, at(a.offset), a.pointer),
      );
    }
  }

  if (fatal) return { result: { diagnostics } };

  let value: unknown = null;
  if (first) {
    try {
      value = toPlainValue(first.toJS({ maxAliasCount: lim.maxAliases }));
    } catch (error) {
      // An alias bomb surfaces as a plain ReferenceError from toJS, not a YAMLParseError.
      const alias = facts?.firstAlias;
      const where = alias ? at(alias.offset) : START;
      const message =
        error instanceof ReferenceError
          ? `aliases expand beyond the limit of ${lim.maxAliases} (${messageOf(error)})`
          : `the document could not be converted: ${messageOf(error)}`;
      diagnostics.push(loadDiagnostic('YAML_LIMIT', message, file, where, alias?.pointer));
      return { result: { diagnostics } };
    }
  }

  return { result: { document: { file, text, value, sourceMap }, diagnostics }, ...(facts ? { facts } : {}), lineCounter };
}

/** What yaml's parseAllDocuments does, from tokens already lexed. */
function parseTokens(tokens: readonly string[], lineCounter: LineCounter): Document[] {
  const parser = new Parser(lineCounter.addNewLine);
  const composer = new Composer({
    uniqueKeys: true,
    strict: true,
    // Collection keys would otherwise print a warning to the console during toJS.
    logLevel: 'error',
  });
  function* cst() {
    lineCounter.addNewLine(0);
    for (const token of tokens) yield* parser.next(token);
    yield* parser.end();
  }
  return Array.from(composer.compose(cst()));
}

// Parsing is the slow part of loading (the yaml library runs at about a megabyte a second before
// the JIT warms up), and a cold CLI start parses every chain and manifest. So results are kept
// on disk by content hash (cache/disk-cache.ts): the plain value, the diagnostics, and the offsets
// behind the source map. Bump the format when any of those change shape. An entry is data, never
// code, and everything after the parse (schema check, compile) checks it again; the cache only
// returns entries this user's engine wrote (HMAC), so a planted one cannot change what runs.
const CACHE_FORMAT = 'yaml-2.9/loader/1';

interface CacheEntry {
  readonly diagnostics: readonly Diagnostic[];
  readonly document?: {
    readonly value: unknown;
    readonly values: readonly (readonly [string, number])[];
    readonly keys: readonly (readonly [string, number])[];
    readonly lineStarts: readonly number[];
  };
}

function toCache(result: LoadResult, facts: DocumentFacts | undefined, lineCounter: LineCounter | undefined): string | undefined {
  let exact = true;
  // JSON has no Infinity or NaN (YAML's .inf, .nan): such a document is simply not cached.
  const replacer = (_key: string, v: unknown): unknown => {
    if (typeof v === 'number' && !Number.isFinite(v)) exact = false;
    return v;
  };
  const entry: CacheEntry = {
    diagnostics: result.diagnostics.map(({ file: _file, ...rest }) => rest as Diagnostic),
    ...(result.document
      ? {
          document: {
            value: result.document.value,
            values: [...(facts?.values ?? [])],
            keys: [...(facts?.keys ?? [])],
            lineStarts: lineCounter?.lineStarts ?? [],
          },
        }
      : {}),
  };
  const text = JSON.stringify(entry, replacer);
  return exact ? text : undefined;
}

function fromCache(cached: string, text: string, file: string): LoadResult | undefined {
  let entry: CacheEntry;
  try {
    entry = JSON.parse(cached) as CacheEntry;
  } catch {
    return undefined;
  }
  const diagnostics = entry.diagnostics.map((d) => ({ ...d, file }));
  if (!entry.document) return { diagnostics };
  const lineCounter = new LineCounter();
  for (const offset of entry.document.lineStarts) lineCounter.addNewLine(offset);
  const sourceMap = new OffsetSourceMap(new Map(entry.document.values), new Map(entry.document.keys), lineCounter);
  return { document: { file, text, value: entry.document.value, sourceMap }, diagnostics };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
