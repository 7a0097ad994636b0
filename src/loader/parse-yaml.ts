import { Composer, LineCounter, Parser, type Document } from 'yaml';
import { hasErrors, type Diagnostic } from '../common/errors.js';
import { scanTokens } from './depth-check.js';
import { capDiagnostics } from './cap-diagnostics.js';
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
  const key = yamlCacheKey(text, lim);
  const cached = cache.read('yaml', key);
  if (cached !== undefined) {
    const hit = fromCache(cached, text, file);
    if (hit) return hit;
  }
  const { result, facts, lineCounter } = parseUncached(text, file, lim);
  // A file with errors is not cached: it is about to be edited, and its diagnostics could be many.
  if (hasErrors(result.diagnostics)) return result;
  const entry = toCache(result, facts, lineCounter);
  if (entry !== undefined) cache.write('yaml', key, entry);
  return result;
}

/** The disk-cache key of a parse: the text and every limit that shapes the result. */
export function yamlCacheKey(text: string, limits?: Partial<LoadLimits>): string {
  const lim = resolveLimits(limits);
  return cacheKey(CACHE_FORMAT, String(lim.maxBytes), String(lim.maxDepth), String(lim.maxAliases), String(lim.maxDiagnostics), text);
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
  // They end where a second document starts: only the first is parsed.
  const tokens: string[] = [];
  const { tooDeep, secondDocument } = scanTokens(text, lim.maxDepth, tokens);
  if (tooDeep) {
    return { result: { diagnostics: [loadDiagnostic('YAML_LIMIT', `collections nested deeper than ${lim.maxDepth} levels`, file, tooDeep)] } };
  }

  const lineCounter = new LineCounter();
  let docs: Document[];
  let stopped = false;
  try {
    ({ docs, stopped } = parseTokens(tokens, lineCounter, lim.maxDiagnostics * 10));
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
    // One stray bracket can make the parser report dozens of errors after it, each a consequence
    // of the first: report the first, and how many followed.
    const [first, ...more] = doc.errors;
    if (first) {
      fatal = true;
      const count = `${stopped ? 'at least ' : ''}${more.length} more YAML error${more.length > 1 ? 's' : ''}`;
      const after = more.length ? ` (and ${count} after it, most likely caused by this one${stopped ? '; reading stopped there' : ''})` : '';
      diagnostics.push(loadDiagnostic('YAML_SYNTAX', `${first.message}${after}`, file, at(first.pos[0])));
    }
    for (const warning of doc.warnings) {
      diagnostics.push(loadDiagnostic('YAML_SYNTAX', warning.message, file, at(warning.pos[0]), undefined, 'warning'));
    }
  }

  if (secondDocument) {
    diagnostics.push(
      loadDiagnostic('YAML_MULTI_DOCUMENT', 'a file holds exactly one YAML document; a second one starts here (nothing after it is read)', file, secondDocument),
    );
  }

  if (facts) {
    for (const d of facts.duplicates) {
      diagnostics.push(loadDiagnostic('YAML_DUPLICATE_KEY', 'duplicate key: map keys must be unique', file, at(d.offset), d.pointer));
    }
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

  if (fatal) return { result: { diagnostics: capDiagnostics(diagnostics, lim.maxDiagnostics, file, stopped) } };

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
      return { result: { diagnostics: capDiagnostics(diagnostics, lim.maxDiagnostics, file, stopped) } };
    }
  }

  return {
    result: { document: { file, text, value, sourceMap }, diagnostics: capDiagnostics(diagnostics, lim.maxDiagnostics, file, stopped) },
    ...(facts ? { facts } : {}),
    lineCounter,
  };
}

/** What yaml's parseAllDocuments does, from tokens already lexed. */
function parseTokens(tokens: readonly string[], lineCounter: LineCounter, maxSyntaxErrors: number): { docs: Document[]; stopped: boolean } {
  const parser = new Parser(lineCounter.addNewLine);
  const composer = new Composer({
    // Duplicates are found by walkDocument in linear time (yaml's check is quadratic).
    uniqueKeys: false,
    strict: true,
    // Collection keys would otherwise print a warning to the console during toJS.
    logLevel: 'error',
  });
  // Past this many syntax errors the rest of the text is not parsed: every one beyond the
  // diagnostics limit is only counted, and a megabyte of `]` is a million of them.
  let errors = 0;
  let stopped = false;
  function* cst() {
    lineCounter.addNewLine(0);
    for (const token of tokens) {
      for (const node of parser.next(token)) {
        yield node;
        if (node.type === 'error' && ++errors >= maxSyntaxErrors) {
          stopped = true;
          yield* parser.end();
          return;
        }
      }
    }
    yield* parser.end();
  }
  // yaml reports each problem as an Error, and capturing a stack trace for each of a million
  // errors (a megabyte of `]`) was three quarters of the parse: the parse is synchronous, so the
  // stack depth is lowered for exactly its duration. The diagnostics carry positions, not stacks.
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return { docs: Array.from(composer.compose(cst())), stopped };
  } finally {
    Error.stackTraceLimit = limit;
  }
}

// Parsing is the slow part of loading (the more so before the JIT has warmed up), and a cold CLI
// start parses every chain and manifest. So results are kept on disk by content hash
// (cache/disk-cache.ts): the plain value, the diagnostics, and the offsets behind the source map. Bump the format when any of those change shape. An entry is data, never
// code, and everything after the parse (schema check, compile) checks it again; the cache only
// returns entries this user's engine wrote (HMAC), so a planted one cannot change what runs.
const CACHE_FORMAT = 'yaml-2.9/loader/2';

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
  const lineCounter = lineCounterOf(entry.document.lineStarts);
  const sourceMap = new OffsetSourceMap(new Map(entry.document.values), new Map(entry.document.keys), lineCounter);
  return { document: { file, text, value: entry.document.value, sourceMap }, diagnostics };
}

/** A LineCounter from line starts the disk cache recorded. */
function lineCounterOf(lineStarts: readonly number[]): LineCounter {
  const lineCounter = new LineCounter();
  for (const offset of lineStarts) lineCounter.addNewLine(offset);
  return lineCounter;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
