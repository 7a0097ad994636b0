// Directed graphs for the compiler (steps), the chain set (sub-chains) and plugin requirements:
// topological order, strongly connected components, the cycles among them, the shortest path
// round a cycle for messages, and the longest path below each node. Every walk is a loop with an
// explicit stack or queue: a chain may have 100,000 steps in a row, and a recursive walk (such as
// graphlib's topsort and tarjan) overflows the call stack at a few thousand.
//
// Nodes are the numbers 0…n−1 and `next[v]` lists the nodes v has an edge to; where the order of
// a result matters (which cycle a message names), it follows the order of those lists.
// `keyedGraph` numbers nodes of any other kind.

/** `next[v]`: the nodes node v has an edge to. */
export type Successors = readonly (readonly number[])[];

/** Kahn's algorithm: every node after the nodes with an edge to it, or undefined when there is a cycle. */
export function topologicalOrder(next: Successors): number[] | undefined {
  const n = next.length;
  const waiting = new Int32Array(n);
  for (const list of next) for (const to of list) waiting[to]!++;
  const order: number[] = [];
  for (let i = 0; i < n; i++) if (waiting[i] === 0) order.push(i);
  for (let head = 0; head < order.length; head++) {
    for (const to of next[order[head]!]!) if (--waiting[to]! === 0) order.push(to);
  }
  return order.length === n ? order : undefined;
}

/**
 * Tarjan's strongly connected components, iteratively. Roots are taken in ascending order and
 * successors in list order, so the components come out as the recursive version gives them:
 * each one after every component it has a path to.
 */
export function stronglyConnected(next: Successors): number[][] {
  const n = next.length;
  const index = new Int32Array(n).fill(-1);
  const low = new Int32Array(n);
  const onStack = new Uint8Array(n);
  const stack: number[] = [];
  const components: number[][] = [];
  const path: number[] = []; // the depth-first path
  const cursor: number[] = []; // per node on the path, the next successor to look at
  let counter = 0;
  for (let root = 0; root < n; root++) {
    if (index[root] !== -1) continue;
    path.push(root);
    cursor.push(0);
    index[root] = low[root] = counter++;
    stack.push(root);
    onStack[root] = 1;
    while (path.length > 0) {
      const v = path[path.length - 1]!;
      const k = cursor[cursor.length - 1]!;
      const succ = next[v]!;
      if (k < succ.length) {
        cursor[cursor.length - 1] = k + 1;
        const w = succ[k]!;
        if (index[w] === -1) {
          index[w] = low[w] = counter++;
          stack.push(w);
          onStack[w] = 1;
          path.push(w);
          cursor.push(0);
        } else if (onStack[w] === 1) low[v] = Math.min(low[v]!, index[w]!);
        continue;
      }
      path.pop();
      cursor.pop();
      const parent = path[path.length - 1];
      if (parent !== undefined) low[parent] = Math.min(low[parent]!, low[v]!);
      if (low[v] === index[v]) {
        const component: number[] = [];
        let w: number;
        do {
          w = stack.pop()!;
          onStack[w] = 0;
          component.push(w);
        } while (w !== v);
        components.push(component);
      }
    }
  }
  return components;
}

/** Whether a strongly connected component holds a cycle: more than one node, or a node with an edge to itself. */
export function isCyclic(component: readonly number[], next: Successors): boolean {
  return component.length > 1 || next[component[0]!]!.includes(component[0]!);
}

/** The strongly connected components that hold a cycle, in stronglyConnected's order. */
export function cycles(next: Successors): number[][] {
  return stronglyConnected(next).filter((component) => isCyclic(component, next));
}

/**
 * The shortest path of at least one edge from `from` to `to` through nodes `within` allows,
 * `[from, …, to]`, or undefined when there is none. With `from === to` that is the shortest cycle
 * through the node, first and last the same. Breadth first, successors in list order.
 */
export function shortestPath(from: number, to: number, next: Successors, within: (node: number) => boolean = () => true): number[] | undefined {
  const previous = new Map<number, number>();
  if (from !== to) previous.set(from, -1);
  const queue = [from];
  for (let head = 0; head < queue.length && !previous.has(to); head++) {
    const v = queue[head]!;
    for (const w of next[v]!) {
      if (previous.has(w) || !within(w)) continue;
      previous.set(w, v);
      if (w === to) break;
      queue.push(w);
    }
  }
  if (!previous.has(to)) return undefined;
  const path = [to];
  for (let v = previous.get(to)!; v !== from; v = previous.get(v)!) path.push(v);
  path.push(from);
  return path.reverse();
}

/**
 * Per node, how many edges the longest path from it has (0 for a node with no successors), or
 * Infinity when a cycle can be reached from it. Components come out of stronglyConnected after
 * everything they reach, so each node's successors are known before it.
 */
export function longestPaths(next: Successors): number[] {
  const length = new Array<number>(next.length).fill(0);
  for (const component of stronglyConnected(next)) {
    if (isCyclic(component, next)) {
      for (const v of component) length[v] = Infinity;
      continue;
    }
    const v = component[0]!;
    let longest = 0;
    for (const w of next[v]!) longest = Math.max(longest, 1 + length[w]!);
    length[v] = longest;
  }
  return length;
}

/** A graph over nodes of another kind: `keys[i]` is node i. */
export interface KeyedGraph<K> {
  readonly keys: readonly K[];
  readonly index: ReadonlyMap<K, number>;
  readonly next: Successors;
}

/**
 * The graph of `roots` and every node reachable from them through `successors`, numbered in the
 * order they are first met (the roots first, in their order). A repeated edge counts once.
 */
export function keyedGraph<K>(roots: Iterable<K>, successors: (key: K) => Iterable<K> | undefined): KeyedGraph<K> {
  const keys: K[] = [];
  const index = new Map<K, number>();
  const add = (key: K): number => {
    let i = index.get(key);
    if (i === undefined) {
      i = keys.length;
      index.set(key, i);
      keys.push(key);
    }
    return i;
  };
  for (const root of roots) add(root);
  const next: number[][] = [];
  for (let i = 0; i < keys.length; i++) {
    const list = new Set<number>();
    for (const key of successors(keys[i]!) ?? []) list.add(add(key));
    next.push([...list]);
  }
  return { keys, index, next };
}

/**
 * A path for a message, `a → b → c`: a long one keeps its first and last `keep` names and counts
 * the rest, so that a cycle through thousands of nodes, named once per member, stays readable.
 */
export function pathText(names: readonly string[], keep = 10): string {
  if (names.length <= 2 * keep + 1) return names.join(' → ');
  const left = names.length - 2 * keep;
  return [...names.slice(0, keep), `… ${left} more …`, ...names.slice(-keep)].join(' → ');
}
