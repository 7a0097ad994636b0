import type { Clock } from '../common/clock.js';
import { ToolchainError } from '../common/errors.js';
import type { RunStore } from '../store/types.js';
import type { StoredWait } from '../store/wait-types.js';

// Approval requests as people see them, and their decisions. A request is a wait of kind
// `approval` in the run store (an `approval:` step, or a dangerous tool's call with no standing
// approval); deciding it ends the wait once — a second decision is refused, whoever makes it —
// and makes its run due, so a process that wakes runs continues it.

export interface ApprovalView {
  readonly id: string;
  readonly run_id: string;
  readonly chain: string;
  /** The step key that asks. */
  readonly step: string;
  readonly prompt: string;
  /** A dangerous tool's call: the tool and its validated arguments. */
  readonly tool?: string;
  readonly args?: Record<string, unknown>;
  readonly approvers?: readonly string[];
  readonly requested_at: number;
  /** When it is denied for want of a decision. */
  readonly until?: number;
  /** Once decided. */
  readonly decision?: { readonly approved: boolean; readonly by: string; readonly comment?: string; readonly at: number };
}

export interface Decision {
  readonly approved: boolean;
  /** Who decides (recorded). */
  readonly by: string;
  readonly comment?: string;
}

interface Detail {
  readonly prompt?: string;
  readonly step?: string;
  readonly tool?: string;
  readonly args?: Record<string, unknown>;
  readonly approvers?: readonly string[];
}

export function approvalView(wait: StoredWait): ApprovalView {
  const d = (wait.detail ?? {}) as Detail;
  const o = wait.outcome;
  return {
    id: wait.id,
    run_id: wait.run_id,
    chain: wait.chain,
    step: d.step ?? wait.key,
    prompt: d.prompt ?? '',
    ...(d.tool !== undefined ? { tool: d.tool, args: d.args ?? {} } : {}),
    ...(d.approvers !== undefined ? { approvers: d.approvers } : {}),
    requested_at: wait.created_at,
    ...(wait.until !== null ? { until: wait.until } : {}),
    ...(o !== null ? { decision: { approved: o.ok, by: o.by ?? (o.ok ? 'unknown' : o.code === 'ABORTED' ? 'its run ended' : 'timeout'), ...(o.comment !== undefined ? { comment: o.comment } : {}), at: wait.resolved_at ?? wait.created_at } } : {}),
  };
}

/** The requests still waiting for a decision, oldest first. */
export async function pendingApprovals(store: RunStore, limit = 1_000): Promise<ApprovalView[]> {
  return (await store.waits.listWaits({ kind: 'approval', open: true, limit })).map(approvalView);
}

/** Decides request `id`; APPROVAL_NOT_FOUND, or APPROVAL_REFUSED (decided already, or `by` is not an approver). */
export async function decideApproval(store: RunStore, clock: Clock, id: string, decision: Decision): Promise<ApprovalView> {
  const [wait] = await store.waits.listWaits({ id, kind: 'approval', limit: 1 });
  if (wait === undefined) throw new ToolchainError('APPROVAL_NOT_FOUND', `no approval request ${id}; 'toolchain approvals' lists the pending ones`);
  const view = approvalView(wait);
  if (view.decision !== undefined) throw new ToolchainError('APPROVAL_REFUSED', `approval ${id} was decided already (${view.decision.approved ? 'approved' : 'denied'} by ${view.decision.by})`);
  if (view.approvers !== undefined && !view.approvers.includes(decision.by)) {
    throw new ToolchainError('APPROVAL_REFUSED', `approval ${id} may be decided by ${view.approvers.join(', ')}, not by ${decision.by}`);
  }
  const comment = decision.comment !== undefined && decision.comment !== '' ? { comment: decision.comment.slice(0, 2_000) } : {};
  const outcome = decision.approved
    ? { ok: true as const, value: null, by: decision.by, ...comment }
    : { ok: false as const, code: 'APPROVAL_DENIED' as const, message: `the request ${id} (step '${view.step}') was denied`, by: decision.by, ...comment };
  const ended = await store.waits.resolveWait(id, outcome, clock.now());
  if (ended === undefined) throw new ToolchainError('APPROVAL_NOT_FOUND', `no approval request ${id}`);
  if (!ended.first) throw new ToolchainError('APPROVAL_REFUSED', `approval ${id} was decided already, at the same moment`);
  return approvalView(ended.wait);
}
