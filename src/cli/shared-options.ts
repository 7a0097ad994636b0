import type { ApprovalRequest } from '../registry/types.js';

// What several commands parse the same way.

/** Commander's accumulator for a repeatable option (`--input a=1 --input b=2`). */
export const collect = (value: string, previous: string[]): string[] => [...previous, value];

/** `--approve TOOL`: a tool may be named bare (`write_file`) or qualified (`files/write_file`). */
export function approvedBy(names: readonly string[]): (req: ApprovalRequest) => boolean {
  const approved = new Set(names);
  return (req) => approved.has(req.tool) || approved.has(req.tool.slice(req.tool.lastIndexOf('/') + 1));
}
