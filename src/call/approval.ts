import { ToolchainError } from '../common/errors.js';
import type { ApprovalRequest } from '../registry/types.js';
import { CallFailure } from './call-context.js';
import type { Callee, CallOwner } from './types.js';

// A call to a dangerous tool waits for approval, after its arguments are prepared and before
// it is invoked; anything but an explicit `true` is a refusal, and the handler never runs. An
// approver may answer 'wait': no one can decide now (a server, a worker, a client with no person
// at hand), so the call becomes a durable approval request that a person decides later — the step
// parks until then, and the run with it once nothing else is at work.

export interface ApprovalInfo {
  readonly args: Record<string, unknown>;
  readonly step: string;
  readonly run_id: string;
  /** The for_each element whose call it is. */
  readonly item?: number;
}

export async function checkApproval(callee: Callee, owner: Pick<CallOwner, 'approve' | 'waits' | 'waitKey'>, info: ApprovalInfo): Promise<void> {
  const name = callee.qualifiedName;
  const approve = owner.approve;
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
  if (answer === 'wait') return decidedLater(name, owner, info);
  if (answer !== true) {
    throw new ToolchainError('APPROVAL_DENIED', `the call to dangerous tool '${name}' in step '${info.step}' was not approved`);
  }
}

/** The call's approval request: decided already (approved, or the denial), or parked until it is. */
async function decidedLater(tool: string, owner: Pick<CallOwner, 'waits' | 'waitKey'>, info: ApprovalInfo): Promise<void> {
  if (owner.waits === undefined || owner.waitKey === undefined) {
    throw new ToolchainError('APPROVAL_DENIED', `the call to dangerous tool '${tool}' in step '${info.step}' needs a person's decision, and this call cannot wait for one`);
  }
  const step = owner.waitKey(info.step, info.item);
  const answer = await owner.waits.wait({ key: `${step}!`, kind: 'approval', approval: { prompt: `Allow step '${info.step}' to call dangerous tool '${tool}'?`, step, tool, args: info.args } });
  if (!answer.over) throw new CallFailure({ code: 'RUN_WAITING', message: answer.why });
  if ('error' in answer) throw new CallFailure(answer.error);
}

/** A list of pre-approved tools (`--approve TOOL`), each named bare (`write_file`) or qualified (`files/write_file`). */
export function approvedBy(names: readonly string[]): (req: ApprovalRequest) => boolean {
  const approved = new Set(names);
  return (req) => approved.has(req.tool) || approved.has(req.tool.slice(req.tool.lastIndexOf('/') + 1));
}
