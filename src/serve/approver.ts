import { approvedBy } from '../call/index.js';
import type { ApprovalRequest, ApproveCallback } from '../registry/types.js';

// Who approves a dangerous tool's call in a run of `toolchain serve`. No person sits at the
// server, so a call without a standing approval (`--approve TOOL`) is not refused: the answer is
// 'wait', which makes it an approval request that a person decides later — in the inspector's
// Approvals page, over `POST /api/approvals/ID`, or from the CLI — while the run holds nothing.
// The engine asks the same approver when it wakes the run, so the decision is found there.

export function serveApprover(standing: readonly string[]): ApproveCallback {
  const approved = approvedBy(standing);
  return (req: ApprovalRequest) => (approved(req) ? true : 'wait');
}
