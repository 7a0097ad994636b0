import type { PendingCall, ToolCall } from './types.js';

// Calls without an id (text protocols, legacy function_call) get `call_1`, `call_2`… in the order
// they appear, skipping any id the model itself used, so every call of one parse has a distinct
// id that its answer can carry. Ids are unique within one parse, not across turns.

export function assignIds(pending: readonly PendingCall[]): ToolCall[] {
  const used = new Set<string>();
  for (const call of pending) if (call.id !== undefined) used.add(call.id);
  let next = 1;
  return pending.map((call) => {
    if (call.id !== undefined) return { id: call.id, name: call.name, arguments: call.arguments };
    while (used.has(`call_${next}`)) next++;
    const id = `call_${next++}`;
    return { id, name: call.name, arguments: call.arguments };
  });
}
