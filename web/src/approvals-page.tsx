import { useState } from 'preact/hooks';
import { api, type ApprovalView } from './api.js';
import { ApprovalCard } from './approval-card.js';
import { usePolling } from './use-polling.js';

// The approval requests waiting for a person, oldest first: a dangerous tool's call (with its
// validated arguments) or an `approval:` step, each with its run and Approve / Deny.
// Polled every 1.5 s while the tab is visible, like the runs list: a request can be made or
// decided by any process on the run store (a worker, the CLI, another server), and only the
// store sees them all — no event stream of this server would.

const REFRESH_MS = 1500;

export function ApprovalsPage() {
  const [approvals, setApprovals] = useState<ApprovalView[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [notice, setNotice] = useState<string | undefined>();
  const [refresh, setRefresh] = useState(0);

  usePolling(
    () => api.approvals(),
    (list) => {
      setApprovals(list);
      setError(undefined);
    },
    setError,
    REFRESH_MS,
    [refresh],
  );

  const decided = (d: ApprovalView | undefined): void => {
    if (d?.decision !== undefined) {
      setNotice(`${d.decision.approved ? 'Approved' : 'Denied'}: ${d.tool ?? d.step} in run ${d.run_id} (by ${d.decision.by}). The run goes on by itself.`);
      setApprovals((list) => list?.filter((a) => a.id !== d.id));
    }
    setRefresh((n) => n + 1);
  };

  return (
    <section>
      <h1 tabIndex={-1}>Approvals</h1>
      <p class="muted">Calls of dangerous tools without a standing approval (<code>--approve TOOL</code>) and <code>approval:</code> steps wait here for a decision; their runs hold nothing while they wait.</p>
      {notice && <p class="notice info" role="status">{notice}</p>}
      {error && <p class="notice error" role="alert">{error}</p>}
      {approvals === undefined ? (
        <p>Loading…</p>
      ) : approvals.length === 0 ? (
        <p class="empty">No approval request is waiting.</p>
      ) : (
        <div class="approvals">
          {approvals.map((a) => <ApprovalCard key={a.id} approval={a} showRun onDecided={decided} />)}
        </div>
      )}
    </section>
  );
}
