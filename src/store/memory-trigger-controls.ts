import { noControl, type TriggerControl, type TriggerControlStore } from './trigger-control-types.js';

// The memory store's paused triggers (the contract is trigger-control-types.ts): a Map by key,
// holding copies, so that no caller can change a record by changing what it was given.

export function memoryTriggerControls(): TriggerControlStore {
  const controls = new Map<string, TriggerControl>();
  const copy = (c: TriggerControl): TriggerControl => ({ ...c, paused: c.paused && { ...c.paused } });

  return {
    async pause(key, pause) {
      const before = controls.get(key) ?? noControl(key);
      if (before.paused !== null) return { control: copy(before), changed: false };
      const after: TriggerControl = { ...before, paused: { by: pause.by, at: pause.at, ...(pause.reason !== undefined ? { reason: pause.reason } : {}) } };
      controls.set(key, after);
      return { control: copy(after), changed: true };
    },
    async resume(key, at) {
      const before = controls.get(key) ?? noControl(key);
      if (before.paused === null) return { control: copy(before), changed: false };
      const after: TriggerControl = { key, paused: null, resumed_at: at };
      controls.set(key, after);
      return { control: copy(after), changed: true };
    },
    async list() {
      return [...controls.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)).map(copy);
    },
  };
}
