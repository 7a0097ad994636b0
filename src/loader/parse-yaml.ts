import { Composer, LineCounter, Parser, type Document } from 'yaml';
import type { Diagnostic } from '../errors.js';
import { findDepthViolation } from './depth-check.js';
import { loadDiagnostic, START } from './diagnostic.js';
import { walkDocument, type DocumentFacts } from './document-walk.js';
import { resolveLimits } from './limits.js';
import { toPlainValue } from './safe-value.js';
import { OffsetSourceMap, positionAt } from './source-map.js';
import type { LoadLimits, LoadResult } from './types.js';

/**
 * Parses one YAML document safely. `document` is present whenever a value could be built
 * (duplicate keys, forbidden keys and extra documents still leave a usable first document, so
 * later stages can add their own diagnostics); it is absent after size, depth, alias or syntax
 * errors, where any value would be a guess.
 */
export function parseYaml(text: string, file: string, limits?: Partial<LoadLimits>): LoadResult {
  const lim = resolveLimits(limits);

  // text.length is a lower bound on UTF-8 bytes, so the O(n) byte count only runs on plausible sizes.
  if (text.length > lim.maxBytes || Buffer.byteLength(text, 'utf8') > lim.maxBytes) {
    return {
      diagnostics: [loadDiagnostic('FILE_TOO_LARGE', `larger than the limit of ${lim.maxBytes} bytes`, file, START)],
    };
  }

  // The depth check lexes the text anyway; its tokens feed the parser so the text is lexed once.
  const tokens: string[] = [];
  const tooDeep = findDepthViolation(text, lim.maxDepth, tokens);
  if (tooDeep) {
    return {
      diagnostics: [loadDiagnostic('YAML_LIMIT', `collections nested deeper than ${lim.maxDepth} levels`, file, tooDeep)],
    };
  }

  const lineCounter = new LineCounter();
  let docs: Document[];
  try {
    docs = parseTokens(tokens, lineCounter);
  } catch (error) {
    // yaml reports problems as data; a throw here is a bug or an exhausted stack, not user input.
    return { diagnostics: [loadDiagnostic('YAML_LIMIT', `YAML could not be parsed: ${messageOf(error)}`, file, START)] };
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

  if (fatal) return { diagnostics };

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
      return { diagnostics };
    }
  }

  return { document: { file, text, value, sourceMap }, diagnostics };
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

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
