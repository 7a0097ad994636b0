import { ToolchainError } from '../common/errors.js';
import type { ApprovalRequest, ApproveCallback } from '../registry/types.js';
import type { Callee } from './types.js';

// A call to a dangerous tool waits for approval, after its arguments are prepared and before
// it is invoked; anything but an explicit `true` is a refusal, and the handler never runs.

export interface ApprovalInfo {
  readonly args: Record<string, unknown>;
  readonly step: string;
  readonly run_id: string;
}

export async function checkApproval(callee: Callee, approve: ApproveCallback | undefined, info: ApprovalInfo): Promise<void> {
  const name = callee.qualifiedName;
  if (!approve) {
    throw new ToolchainError(
      'APPROVAL_DENIED',
      `tool '${name}' is dangerous and needs approval, and nothing can approve it here ` +
        `(pass an \`approve\` callback, or \`--approve ${name}\` on the command line)`,
    );
  }
  let answer: unknown;
  try {
    answer = await approve({ tool: name, args: info.args, step: info.step, run_id: info.run_id });
  } catch (error) {
    throw new ToolchainError('APPROVAL_DENIED', `approval of tool '${name}' failed: ${(error as Error)?.message ?? String(error)}`);
  }
  if (answer !== true) {
    throw new ToolchainError('APPROVAL_DENIED', `the call to dangerous tool '${name}' in step '${info.step}' was not approved`);
  }
}

/** A list of pre-approved tools (`--approve TOOL`), each named bare (`write_file`) or qualified (`files/write_file`). */
export function approvedBy(names: readonly string[]): (req: ApprovalRequest) => boolean {
  const approved = new Set(names);
  return (req) => approved.has(req.tool) || approved.has(req.tool.slice(req.tool.lastIndexOf('/') + 1));
}
