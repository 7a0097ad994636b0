import { useState } from 'preact/hooks';
import { ApiError, api, formatTime, type ApprovalView } from './api.js';

// One approval request as a person decides it: what asks (the tool and its validated arguments,
// or an `approval:` step's prompt), which run, until when, and Approve / Deny with an optional
// comment. The server records who decided (its word for the caller, not anything sent here).

const ARGS_LIMIT = 4_000;

export function ApprovalCard({ approval, showRun, onDecided }: { approval: ApprovalView; showRun: boolean; onDecided: (decided: ApprovalView | undefined) => void }) {
  const [comment, setComment] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const decide = async (decision: 'approve' | 'deny'): Promise<void> => {
    setBusy(true);
    setError(undefined);
    try {
      onDecided(await api.decide(approval.id, decision, comment));
    } catch (e) {
      // Decided meanwhile (elsewhere, or in another tab): the list drops it on its next refresh.
      setError(e instanceof ApiError ? `${e.code}: ${e.message}` : (e as Error).message);
      if (e instanceof ApiError && (e.status === 404 || e.status === 409)) onDecided(undefined);
    } finally {
      setBusy(false);
    }
  };
  const args = approval.args !== undefined ? JSON.stringify(approval.args, null, 2) : undefined;
  const titleId = `approval-${approval.id}`;
  return (
    <article class="approval" data-approval={approval.id} data-run={approval.run_id} aria-labelledby={titleId}>
      <h3 id={titleId}>{approval.tool !== undefined ? <>Call of <code>{approval.tool}</code></> : <>Step <code>{approval.step}</code></>}</h3>
      <p class="prompt">{approval.prompt}</p>
      <dl>
        {showRun && (
          <>
            <dt>Run</dt>
            <dd>
              <a href={`#/runs/${encodeURIComponent(approval.run_id)}`} class="mono">{approval.run_id}</a> ({approval.chain})
            </dd>
          </>
        )}
        <dt>Step</dt>
        <dd><code>{approval.step}</code></dd>
        {args !== undefined && (
          <>
            <dt>Arguments</dt>
            <dd><pre class="json args">{args.length > ARGS_LIMIT ? `${args.slice(0, ARGS_LIMIT)}\n… (${args.length - ARGS_LIMIT} more characters)` : args}</pre></dd>
          </>
        )}
        {approval.approvers !== undefined && (
          <>
            <dt>Approvers</dt>
            <dd>{approval.approvers.join(', ')}</dd>
          </>
        )}
        <dt>Asked</dt>
        <dd>{formatTime(approval.requested_at)}</dd>
        {approval.until !== undefined && (
          <>
            <dt>Denied if undecided by</dt>
            <dd>{formatTime(approval.until)}</dd>
          </>
        )}
      </dl>
      <form class="decide" onSubmit={(e) => e.preventDefault()}>
        <label class="sr-only" for={`${titleId}-comment`}>Comment</label>
        <input id={`${titleId}-comment`} type="text" placeholder="Comment (optional)" maxLength={2000} value={comment} onInput={(e) => setComment(e.currentTarget.value)} />
        <button type="button" class="approve" disabled={busy} onClick={() => void decide('approve')}>Approve</button>
        <button type="button" class="deny" disabled={busy} onClick={() => void decide('deny')}>Deny</button>
      </form>
      {error && <p class="notice error" role="alert">{error}</p>}
    </article>
  );
}
