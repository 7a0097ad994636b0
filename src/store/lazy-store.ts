import type { RunStore } from './types.js';

// A store opened when it is first used: a command that may refuse before it runs anything (a
// mistyped chain name) leaves no trace — opening an SQLite store creates its file and folder.

export function openOnFirstUse(url: string, open: () => Promise<RunStore>): RunStore {
  let opened: Promise<RunStore> | undefined;
  const store = (): Promise<RunStore> => (opened ??= open());
  return {
    url,
    createRun: async (run) => (await store()).createRun(run),
    claimRun: async (id, claim) => (await store()).claimRun(id, claim),
    recordSteps: async (batches) => (await store()).recordSteps(batches),
    finishRun: async (id, epoch, end) => (await store()).finishRun(id, epoch, end),
    renewLease: async (id, epoch, leaseUntil, now) => (await store()).renewLease(id, epoch, leaseUntil, now),
    requestCancel: async (id, now) => (await store()).requestCancel(id, now),
    getRun: async (id) => (await store()).getRun(id),
    getSteps: async (id) => (await store()).getSteps(id),
    listRuns: async (filter) => (await store()).listRuns(filter),
    prune: async (before) => (await store()).prune(before),
    waits: {
      openWait: async (runId, epoch, wait, now) => (await store()).waits.openWait(runId, epoch, wait, now),
      parkRun: async (runId, epoch, wakeAt, waits, now) => (await store()).waits.parkRun(runId, epoch, wakeAt, waits, now),
      wakeAt: async (runId) => (await store()).waits.wakeAt(runId),
      resolveWait: async (id, outcome, now) => (await store()).waits.resolveWait(id, outcome, now),
      listWaits: async (filter) => (await store()).waits.listWaits(filter),
      dueRuns: async (now, limit) => (await store()).waits.dueRuns(now, limit),
      recordEvent: async (event) => (await store()).waits.recordEvent(event),
      listEvents: async (filter) => (await store()).waits.listEvents(filter),
    },
    triggers: {
      pause: async (key, pause) => (await store()).triggers.pause(key, pause),
      resume: async (key, at) => (await store()).triggers.resume(key, at),
      list: async () => (await store()).triggers.list(),
    },
    async close() {
      if (opened !== undefined) await (await opened.catch(() => undefined))?.close();
    },
  };
}
