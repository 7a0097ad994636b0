// Graph walks over step indices, written as loops with explicit stacks: a chain may have 100,000
// steps in a row, and a recursive walk (graphlib's topsort and tarjan were) overflows the call
// stack at a few thousand. `next[i]` lists the steps that wait for step i, in ascending order.

/** Kahn's algorithm: every step after the steps it waits for, or undefined when there is a cycle. */
export function topologicalOrder(next: readonly (readonly number[])[]): number[] | undefined {
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
 * Tarjan's strongly connected components, iteratively. Nodes are visited in ascending order and
 * their successors too, so the components come out in the order graphlib's recursive version gave.
 */
export function stronglyConnected(next: readonly (readonly number[])[]): number[][] {
  const n = next.length;
  const index = new Int32Array(n).fill(-1);
  const low = new Int32Array(n);
  const onStack = new Uint8Array(n);
  const stack: number[] = [];
  const components: number[][] = [];
  const path: number[] = []; // the DFS path
  const cursor: number[] = []; // the next successor to look at, per node on the path
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

/** A simple cycle through `start` (depth first, smallest successor first), or [] when there is none. */
export function cycleThrough(start: number, next: ReadonlyMap<number, readonly number[]>): number[] {
  const path = [start];
  const cursor = [0];
  const visited = new Set([start]);
  while (path.length > 0) {
    const n = path[path.length - 1]!;
    const list = next.get(n) ?? [];
    const k = cursor[cursor.length - 1]!;
    if (k >= list.length) {
      path.pop();
      cursor.pop();
      continue;
    }
    cursor[cursor.length - 1] = k + 1;
    const m = list[k]!;
    if (m === start) return path;
    if (!visited.has(m)) {
      visited.add(m);
      path.push(m);
      cursor.push(0);
    }
  }
  return path;
}
