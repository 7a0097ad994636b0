import { Lexer } from 'yaml';
import type { SourcePosition } from './types.js';

// yaml's Parser recurses once per nesting level through generators, and around a thousand levels
// that takes the whole process down (not a catchable RangeError, also in a worker). So depth is
// bounded first, on the Lexer's token stream: the Lexer is a flat loop, and counting brackets and
// indentation over its tokens needs no recursion either.

// Control tokens the Lexer emits that are not slices of the source.
const DOC_MODE = '\x02';
const FLOW_END = '\x18';
const SCALAR = '\x1f';

type BlockKind = 'seq' | 'map';

interface OpenBlock {
  readonly col: number;
  readonly kind: BlockKind;
}

/**
 * The position of the first token that opens a collection nested deeper than `maxDepth`,
 * or undefined. Block nesting is estimated from indicator columns (`-`, `?`, and the column of
 * the key before `:`), which is what the parser's indentation rules decide nesting by; it never
 * overcounts valid YAML by more than a level per column, so real chains are far from the limit.
 */
export function findDepthViolation(text: string, maxDepth: number, tokens?: string[]): SourcePosition | undefined {
  const blocks: OpenBlock[] = [];
  let flow = 0;
  let offset = 0;
  let line = 1;
  let lineStart = 0;
  // Column where the current block-context node began: the key's column when a `:` follows.
  let nodeCol = -1;
  let scalarNext = false;

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
    tokens?.push(token);
    if (scalarNext) {
      scalarNext = false;
      if (flow === 0 && nodeCol < 0) nodeCol = offset - lineStart;
    } else if (token === DOC_MODE) {
      continue;
    } else if (token === SCALAR) {
      scalarNext = true;
      continue;
    } else if (token === FLOW_END) {
      flow = 0;
      continue;
    } else {
      const col = offset - lineStart;
      switch (token) {
        case '[':
        case '{':
          if (flow === 0 && nodeCol < 0) nodeCol = col;
          flow++;
          if (tooDeep()) return { line, col: col + 1 };
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
            if (tooDeep()) return { line, col: at + 1 };
          }
          break;
        case '---':
        case '...':
          blocks.length = 0;
          flow = 0;
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
  return undefined;
}
