import { Lexer } from 'yaml';
import type { SourcePosition } from './types.js';

// yaml's Parser recurses once per nesting level through generators, and around a thousand levels
// that takes the whole process down (not a catchable RangeError, also in a worker). So depth is
// bounded first, on the Lexer's token stream: the Lexer is a flat loop, and counting brackets and
// indentation over its tokens needs no recursion either.
//
// The same pass finds where a second document starts, so that only the first is ever parsed (a
// chain or manifest is one document): a megabyte of `[`×60 + `---` repeated is 17,000 documents,
// each just under the depth limit, whose parse took a minute and 2.9 GB. Unclosed brackets are
// also counted across documents: the Lexer gives up on an unclosed flow collection at a document
// marker (FLOW_END), but the brackets were still opened.

// Control tokens the Lexer emits that are not slices of the source.
const BOM = '\ufeff';
const DOC_MODE = '\x02';
const FLOW_END = '\x18';
const SCALAR = '\x1f';

type BlockKind = 'seq' | 'map';

interface OpenBlock {
  readonly col: number;
  readonly kind: BlockKind;
}

export interface TokenScan {
  /** Where the first collection nested deeper than the limit opens. */
  readonly tooDeep?: SourcePosition;
  /** Where a second document starts; `tokens` then ends before it. */
  readonly secondDocument?: SourcePosition & { readonly offset: number };
}

/**
 * Lexes `text` once into `tokens`, stopping at a collection nested deeper than `maxDepth` or at
 * the start of a second document. Block nesting is estimated from indicator columns (`-`, `?`, and the column of
 * the key before `:`), which is what the parser's indentation rules decide nesting by; it never
 * overcounts valid YAML by more than a level per column, so real chains are far from the limit.
 */
export function scanTokens(text: string, maxDepth: number, tokens: string[] = []): TokenScan {
  const blocks: OpenBlock[] = [];
  let flow = 0;
  let offset = 0;
  let line = 1;
  let lineStart = 0;
  // Column where the current block-context node began: the key's column when a `:` follows.
  let nodeCol = -1;
  let scalarNext = false;
  // Documents: one has started once content or a `---` was seen; `...` ends it.
  let documents = 0;
  let inDocument = false;

  const tooDeep = (): boolean => blocks.length + flow > maxDepth;

  const openBlock = (col: number, kind: BlockKind): void => {
    while (blocks.length > 0 && blocks[blocks.length - 1]!.col > col) blocks.pop();
    const top = blocks[blocks.length - 1];
    if (top && top.col === col) {
      if (top.kind === kind) return;
      if (kind === 'map') {
        // A sequence may sit at its parent key's indent; a key at that column ends the sequence.
        blocks.pop();
        const parent = blocks[blocks.length - 1];
        if (parent && parent.col === col && parent.kind === 'map') return;
      }
    }
    blocks.push({ col, kind });
  };

  for (const token of new Lexer().lex(text)) {
    if (startsDocument(token, inDocument)) {
      documents++;
      if (documents > 1) return { secondDocument: { line, col: offset - lineStart + 1, offset } };
    }
    if (token === '...') inDocument = false;
    else if (token === '---' || isContent(token)) inDocument = true;
    tokens.push(token);
    if (scalarNext) {
      scalarNext = false;
      if (flow === 0 && nodeCol < 0) nodeCol = offset - lineStart;
    } else if (token === DOC_MODE) {
      continue;
    } else if (token === SCALAR) {
      scalarNext = true;
      continue;
    } else if (token === FLOW_END) {
      // The Lexer abandoned unclosed brackets (an error); they still count towards the depth.
      continue;
    } else {
      const col = offset - lineStart;
      switch (token) {
        case '[':
        case '{':
          if (flow === 0 && nodeCol < 0) nodeCol = col;
          flow++;
          if (tooDeep()) return { tooDeep: { line, col: col + 1 } };
          break;
        case ']':
        case '}':
          if (flow > 0) flow--;
          break;
        case '-':
        case '?':
        case ':':
          if (flow === 0) {
            const kind: BlockKind = token === '-' ? 'seq' : 'map';
            const at = token === ':' && nodeCol >= 0 ? nodeCol : col;
            openBlock(at, kind);
            nodeCol = -1;
            if (tooDeep()) return { tooDeep: { line, col: at + 1 } };
          }
          break;
        case '---':
        case '...':
          blocks.length = 0;
          nodeCol = -1;
          break;
        case '\n':
        case '\r\n':
          nodeCol = -1;
          break;
        default: {
          // Anchors, tags, aliases and quoted scalars can start a key; spaces and comments cannot.
          const first = token[0];
          if (flow === 0 && nodeCol < 0 && (first === '&' || first === '!' || first === '*' || first === '"' || first === "'")) {
            nodeCol = col;
          }
        }
      }
    }
    const nl = token.lastIndexOf('\n');
    if (nl >= 0) {
      for (let i = token.indexOf('\n'); i >= 0; i = token.indexOf('\n', i + 1)) line++;
      lineStart = offset + nl + 1;
    }
    offset += token.length;
  }
  return {};
}

/** Tokens that are not document content: stream control, spacing, comments, directives. */
function isContent(token: string): boolean {
  if (token === DOC_MODE || token === BOM || token === FLOW_END || token === '\n' || token === '\r\n') return false;
  const first = token[0];
  if (first === '#' || first === '%') return false;
  return !/^[ \t]*$/.test(token);
}

/** Every `---` starts a document; so does content after `...` or at the very start. */
function startsDocument(token: string, inDocument: boolean): boolean {
  return token === '---' || (!inDocument && token !== '...' && isContent(token));
}
