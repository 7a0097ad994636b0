// Bytes allocated per call of an async function, garbage included: V8's sampling heap profiler
// (through node:inspector) with the objects that minor and major GCs collected kept in the
// profile. A figure to follow across builds: it does not depend on the machine's speed or load,
// where time does (and allocation is most of what a quick step costs beyond its work).

import { Session } from 'node:inspector/promises';

/** Mean bytes allocated per call of `fn` over `calls` calls, after as many unmeasured ones. */
export async function bytesPerCall(fn: () => Promise<unknown>, calls: number): Promise<number> {
  for (let i = 0; i < calls; i++) await fn();
  const session = new Session();
  session.connect();
  try {
    await session.post('HeapProfiler.enable');
    await session.post('HeapProfiler.startSampling', { samplingInterval: 256, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
    for (let i = 0; i < calls; i++) await fn();
    const { profile } = await session.post('HeapProfiler.stopSampling');
    let total = 0;
    const walk = (node: typeof profile.head): void => {
      total += node.selfSize;
      for (const child of node.children) walk(child);
    };
    walk(profile.head);
    return total / calls;
  } finally {
    session.disconnect();
  }
}
