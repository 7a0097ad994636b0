import { useEffect, useState } from 'preact/hooks';
import { api, describeWaits, formatDuration, formatTime, type ChainListItem, type RunSummary } from './api.js';
import { StatusBadge } from './status.js';
import { usePolling } from './use-polling.js';

// The runs list: newest first, filtered by status and chain, refreshed every 1.5 s while the tab
// is visible (and at once when it becomes visible again). A waiting run says what it waits for.

const STATUSES = ['', 'running', 'waiting', 'succeeded', 'failed', 'compensation_failed', 'cancelled'];
const REFRESH_MS = 1500;

export function RunsPage() {
  const [runs, setRuns] = useState<RunSummary[] | undefined>();
  const [chains, setChains] = useState<ChainListItem[]>([]);
  const [status, setStatus] = useState('');
  const [chain, setChain] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [now, setNow] = useState(Date.now());

  useEffect(() => {
    api.chains().then(setChains, (e: Error) => setError(e.message));
  }, []);

  usePolling(
    () => api.runs({ status, chain, limit: 200 }),
    (list) => {
      setRuns(list);
      setNow(Date.now());
      setError(undefined);
    },
    setError,
    REFRESH_MS,
    [status, chain],
  );

  return (
    <section>
      <h1 tabIndex={-1}>Runs</h1>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Status{' '}
          <select value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
            {STATUSES.map((s) => <option value={s}>{s || 'any'}</option>)}
          </select>
        </label>
        <label>
          Chain{' '}
          <select value={chain} onChange={(e) => setChain(e.currentTarget.value)}>
            <option value="">any</option>
            {chains.map((c) => <option value={c.name}>{c.name}</option>)}
          </select>
        </label>
        <a class="button" href="#/start">Start a run</a>
      </form>
      {error && <p class="notice error" role="alert">{error}</p>}
      {runs === undefined ? (
        <p>Loading…</p>
      ) : runs.length === 0 ? (
        <p class="empty">No runs{status || chain ? ' match these filters' : ' yet'}. <a href="#/start">Start one</a>.</p>
      ) : (
        <table class="runs">
          <caption class="sr-only">Runs, newest first</caption>
          <thead>
            <tr><th scope="col">Status</th><th scope="col">Chain</th><th scope="col">Run</th><th scope="col">Started</th><th scope="col" class="num">Duration</th><th scope="col">Error or wait</th></tr>
          </thead>
          <tbody>
            {runs.map((r) => (
              <tr key={r.run_id} data-run={r.run_id} data-status={r.status} data-interrupted={r.interrupted ? 'true' : undefined}>
                <td><StatusBadge status={r.interrupted ? 'interrupted' : r.status} /></td>
                <td>{r.chain}</td>
                <td><a href={`#/runs/${encodeURIComponent(r.run_id)}`} class="mono">{r.run_id.slice(0, 13)}</a></td>
                <td>{formatTime(r.started_at)}</td>
                <td class="num">{formatDuration(r.duration_ms ?? ((r.status === 'running' && !r.interrupted) || r.status === 'waiting' ? now - r.started_at : undefined))}</td>
                <td class="error-cell">{r.status === 'waiting' ? <WaitingFor run={r} /> : r.error ? <><code>{r.error.code}</code> {r.error.message}</> : ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/** What a waiting run waits for, and when it is looked at again (its earliest sleep or timeout). */
export function WaitingFor({ run }: { run: Pick<RunSummary, 'waiting_for' | 'wake_at'> }) {
  return (
    <span class="waiting-for">
      waits for {describeWaits(run.waiting_for) || 'a wait'}
      {run.wake_at !== undefined && run.wake_at !== null && <>, until {formatTime(run.wake_at)}</>}
    </span>
  );
}
