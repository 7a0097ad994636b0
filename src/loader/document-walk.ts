import { isAlias, isMap, isNode, isPair, isScalar, isSeq, type Document, type Node } from 'yaml';
import { FORBIDDEN_KEYS } from '../common/forbidden-keys.js';
import { childPointer } from '../common/json-pointer.js';

export interface NodeAt {
  readonly pointer: string;
  readonly offset: number;
}

export interface ForbiddenKey extends NodeAt {
  readonly key: string;
}

export interface AliasAt extends NodeAt {
  readonly name: string;
}

export interface DocumentFacts {
  /** Pointer → offset where the value starts. */
  readonly values: Map<string, number>;
  /** Pointer → offset where the member's key starts. */
  readonly keys: Map<string, number>;
  readonly forbidden: ForbiddenKey[];
  /** Second and later uses of a key in one mapping, at the repeated key. */
  readonly duplicates: NodeAt[];
  readonly firstAlias?: AliasAt;
  /** An alias before any anchor of its name: toJS would throw a bare ReferenceError. */
  readonly unresolvedAlias?: AliasAt;
  /** An alias inside the node it names: toJS would build a value that contains itself. */
  readonly recursiveAlias?: AliasAt;
}

interface Frame {
  readonly node: unknown;
  readonly pointer: string;
  readonly parent: Frame | undefined;
  /** Keys are walked only for their anchors; their insides get no pointers. */
  readonly inKey: boolean;
}

function startOf(node: unknown): number | undefined {
  return isNode(node) ? (node.range?.[0] ?? undefined) : undefined;
}

/**
 * The JSON key toJS() gives a map key (yaml's stringifyKey): null is '', scalars are String(value).
 * Collection keys have no faithful JSON form; their source text at least keeps them distinct.
 */
function keyString(key: unknown, anchors: ReadonlyMap<string, Node>, text: string): string {
  const target = isAlias(key) ? (anchors.get(key.source) ?? key) : key;
  if (target === null || target === undefined) return '';
  if (isScalar(target)) {
    const v = target.value;
    return v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
  }
  const range = isNode(target) ? target.range : undefined;
  return range ? text.slice(range[0], range[1]).trim() : '';
}

/**
 * One pass over the Document in source order (so an alias sees exactly the anchors defined before
 * it), with an explicit stack: the depth check bounds nesting, but the walk should not rely on it.
 */
export function walkDocument(doc: Document, text: string): DocumentFacts {
  const values = new Map<string, number>();
  const keys = new Map<string, number>();
  const forbidden: ForbiddenKey[] = [];
  const duplicates: NodeAt[] = [];
  const anchors = new Map<string, Node>();
  let firstAlias: AliasAt | undefined;
  let unresolvedAlias: AliasAt | undefined;
  let recursiveAlias: AliasAt | undefined;

  const rootStart = startOf(doc.contents);
  if (rootStart !== undefined) values.set('', rootStart);
  const stack: Frame[] = [{ node: doc.contents, pointer: '', parent: undefined, inKey: false }];

  while (stack.length > 0) {
    const frame = stack.pop()!;
    const { node, pointer, inKey } = frame;

    if (isAlias(node)) {
      const at: AliasAt = { pointer, offset: startOf(node) ?? 0, name: node.source };
      firstAlias ??= at;
      const target = anchors.get(node.source);
      if (!target) unresolvedAlias ??= at;
      else {
        for (let f: Frame | undefined = frame.parent; f; f = f.parent) {
          if (f.node === target) {
            recursiveAlias ??= at;
            break;
          }
        }
      }
      continue;
    }
    if ((isScalar(node) || isMap(node) || isSeq(node)) && node.anchor) anchors.set(node.anchor, node);

    // Children are pushed in reverse so they pop in source order.
    const children: Frame[] = [];
    if (isMap(node)) {
      // Duplicate keys are found here, one set per mapping: yaml's own check (uniqueKeys) compares
      // each key with every earlier one, and 20,000 distinct keys took 11 s. Keys are compared as
      // the JSON keys they become, so `1` and "1", which toJS would merge, are duplicates too.
      const seen = inKey ? undefined : new Set<string>();
      for (const pair of node.items) {
        if (!isPair(pair)) continue;
        const name = keyString(pair.key, anchors, text);
        const child = inKey ? pointer : childPointer(pointer, name);
        const keyStart = startOf(pair.key);
        if (!inKey) {
          const valueStart = startOf(pair.value) ?? keyStart;
          if (keyStart !== undefined) keys.set(child, keyStart);
          if (valueStart !== undefined) values.set(child, valueStart);
          if (FORBIDDEN_KEYS.has(name)) forbidden.push({ pointer: child, offset: keyStart ?? valueStart ?? 0, key: name });
          if (seen?.has(name)) duplicates.push({ pointer: child, offset: keyStart ?? valueStart ?? 0 });
          seen?.add(name);
        }
        children.push({ node: pair.key, pointer: child, parent: frame, inKey: true });
        children.push({ node: pair.value, pointer: child, parent: frame, inKey });
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, i) => {
        const child = inKey ? pointer : childPointer(pointer, i);
        const start = startOf(item);
        if (!inKey && start !== undefined) values.set(child, start);
        children.push({ node: item, pointer: child, parent: frame, inKey });
      });
    }
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }

  return {
    values,
    keys,
    forbidden,
    duplicates,
    ...(firstAlias && { firstAlias }),
    ...(unresolvedAlias && { unresolvedAlias }),
    ...(recursiveAlias && { recursiveAlias }),
  };
}
