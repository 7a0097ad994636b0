// RFC 9535 queries turned into closures, once, at compile time. A run walks the document; it
// never looks at the path's text again.
// - A name selects a member of an object (its own members only), never of an array or string:
//   `$.list.length` selects nothing.
// - An index selects an element of an array only (negative: from the end), never a member
//   named "0" of an object.
// - `..` visits a node and everything below it, parents before children, without recursion, so
//   a deep document cannot exhaust the stack.
// - Every evaluation spends from a budget (jsonpath-budget.ts), so no path runs away on big data.
// Nodes are plain values; Nothing (no node, no value) is `undefined`, which no JSON value is.

import { isRecord } from '../common/json.js';
import type { Query, Segment, Selector } from './jsonpath-ast.js';
import { isSingular } from './jsonpath-ast.js';
import { spend, type Budget } from './jsonpath-budget.js';
import { compileTest, type QueryCompiler, type Test } from './jsonpath-filter-eval.js';

/** The nodes a query selects, given the root and the current node (`@`, in filters). */
export type NodesFn = (root: unknown, current: unknown, budget: Budget) => unknown[];

/** A singular query's value, or undefined when it selects nothing. */
export type ValueFn = (root: unknown, current: unknown) => unknown;

type Select = (node: unknown, root: unknown, out: unknown[], budget: Budget) => void;
type Step = (nodes: unknown[], root: unknown, budget: Budget) => unknown[];

export type Bag = Record<string, unknown>;

export function compileNodes(query: Query): NodesFn {
  const steps = query.segments.map(compileSegment);
  const fromRoot = query.origin === '$';
  const n = steps.length;
  return (root, current, budget) => {
    let nodes: unknown[] = [fromRoot ? root : current];
    for (let i = 0; i < n && nodes.length > 0; i++) nodes = (steps[i] as Step)(nodes, root, budget);
    return nodes;
  };
}

/** For a singular query: direct steps, no node lists. */
export function compileSingular(query: Query): ValueFn {
  if (!isSingular(query)) throw new Error('compileSingular needs a singular query');
  const keys = query.segments.map((s) => s.selectors[0]!);
  const fromRoot = query.origin === '$';
  const n = keys.length;
  return (root, current) => {
    let v: unknown = fromRoot ? root : current;
    for (let i = 0; i < n; i++) {
      const key = keys[i] as Selector;
      if (key.kind === 'name') {
        if (!isRecord(v) || !Object.hasOwn(v, key.name)) return undefined;
        v = v[key.name];
      } else if (key.kind === 'index') {
        if (!Array.isArray(v)) return undefined;
        const at = key.index < 0 ? v.length + key.index : key.index;
        if (at < 0 || at >= v.length) return undefined;
        v = v[at];
      }
    }
    return v;
  };
}

const QUERIES: QueryCompiler = { nodes: compileNodes, singular: compileSingular };

function compileSegment(segment: Segment): Step {
  const selects = segment.selectors.map(compileSelector);
  const one = selects.length === 1 ? selects[0] : undefined;
  const apply: Select = one ?? ((node, root, out, budget) => {
    for (const select of selects) select(node, root, out, budget);
  });
  if (!segment.descendant) {
    return (nodes, root, budget) => {
      const out: unknown[] = [];
      for (const node of nodes) apply(node, root, out, budget);
      spend(budget, out.length);
      return out;
    };
  }
  return (nodes, root, budget) => {
    const out: unknown[] = [];
    let visits = 0;
    for (const node of nodes) {
      // Depth first, the node before its children, children in order: the stack holds them reversed.
      const stack: unknown[] = [node];
      while (stack.length > 0) {
        const visited = stack.pop();
        if (++visits === 1024) {
          spend(budget, visits);
          visits = 0;
        }
        apply(visited, root, out, budget);
        const children = childrenOf(visited);
        for (let i = children.length - 1; i >= 0; i--) {
          const child = children[i];
          if (typeof child === 'object' && child !== null) stack.push(child);
        }
      }
    }
    spend(budget, visits + out.length);
    return out;
  };
}

function childrenOf(node: unknown): readonly unknown[] {
  if (Array.isArray(node)) return node;
  if (typeof node === 'object' && node !== null) return Object.values(node);
  return [];
}

function compileSelector(selector: Selector): Select {
  switch (selector.kind) {
    case 'name': {
      const { name } = selector;
      return (node, _root, out) => {
        if (isRecord(node) && Object.hasOwn(node, name)) out.push(node[name]);
      };
    }
    case 'index': {
      const { index } = selector;
      return (node, _root, out) => {
        if (!Array.isArray(node)) return;
        const at = index < 0 ? node.length + index : index;
        if (at >= 0 && at < node.length) out.push(node[at]);
      };
    }
    case 'wildcard':
      return (node, _root, out) => {
        if (typeof node === 'object' && node !== null) for (const child of childrenOf(node)) out.push(child);
      };
    case 'slice':
      return compileSlice(selector.start, selector.end, selector.step ?? 1);
    case 'filter': {
      const test: Test = compileTest(selector.expr, QUERIES);
      return (node, root, out, budget) => {
        if (typeof node !== 'object' || node === null) return;
        const children = childrenOf(node);
        spend(budget, children.length);
        for (const child of children) if (test(root, child, budget)) out.push(child);
      };
    }
  }
}

/** RFC 9535's slice: bounds normalised against the length, then clamped; step 0 selects nothing. */
function compileSlice(start: number | undefined, end: number | undefined, step: number): Select {
  return (node, _root, out) => {
    if (!Array.isArray(node) || step === 0) return;
    const len = node.length;
    const norm = (i: number): number => (i >= 0 ? i : len + i);
    if (step > 0) {
      const lower = Math.min(Math.max(norm(start ?? 0), 0), len);
      const upper = Math.min(Math.max(norm(end ?? len), 0), len);
      for (let i = lower; i < upper; i += step) out.push(node[i]);
    } else {
      const upper = Math.min(Math.max(norm(start ?? len - 1), -1), len - 1);
      const lower = Math.min(Math.max(norm(end ?? -len - 1), -1), len - 1);
      for (let i = upper; lower < i; i += step) out.push(node[i]);
    }
  };
}
