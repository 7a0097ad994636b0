import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { RunView } from '../../src/serve/run-view.js';
import { ApiError, api, followRun, formatDuration, formatTime, type ApprovalView, type ChainDetail, type RunDetail } from './api.js';
import { ApprovalCard } from './approval-card.js';
import { WaitingFor } from './runs-page.js';
import { DagView } from './dag-view.js';
import { Gantt } from './gantt.js';
import { StatusBadge } from './status.js';
import { StepPanel } from './step-panel.js';

// One run: its summary and buttons, the DAG coloured by step status, the timeline of attempts
// and the selected step's details. A running run is followed over SSE: its events are folded by
// the same RunView the server uses, redrawn at most once per animation frame, and when the run
// finishes the server's full record (with each step's resolved input) replaces the live one.
// A waiting run is followed too (its stream goes on when it is woken); what it waits for is said
// above the graph, and its pending approval requests can be decided here. They are fetched again
// whenever the run's stream says something about its waits, and after a decision made here.
// A run that ended can be re-run from a selected step ("Re-run from here"): a new run, whose page
// names this one as its origin, as this one's lists its re-runs.

export function RunPage({ id }: { id: string }) {
  const [detail, setDetail] = useState<RunDetail | undefined>();
  const [chain, setChain] = useState<ChainDetail | 'gone' | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [notice, setNotice] = useState<{ kind: 'info' | 'error'; text: string } | undefined>();
  const [selected, setSelected] = useState<string | undefined>();
  const [, setFrame] = useState(0);
  /** Bumped when the run is resumed under the same id: follow it again. */
  const [generation, setGeneration] = useState(0);
  const live = useRef<RunView | undefined>();
  const [approvals, setApprovals] = useState<ApprovalView[]>([]);
  /** Bumped to fetch the run's approval requests again. */
  const [askAgain, setAskAgain] = useState(0);

  useEffect(() => {
    let stopped = false;
    api.approvals(id).then((list) => !stopped && setApprovals(list), () => undefined);
    return () => {
      stopped = true;
    };
  }, [id, askAgain]);

  useEffect(() => {
    let stopped = false;
    let stopFollowing: (() => void) | undefined;
    let frame = 0;
    const redraw = (): void => {
      if (frame === 0) frame = requestAnimationFrame(() => ((frame = 0), setFrame((n) => n + 1)));
    };
    const load = async (): Promise<void> => {
      try {
        const run = await api.run(id);
        if (stopped) return;
        setDetail(run);
        api.chain(run.chain).then((c) => !stopped && setChain(c), () => !stopped && setChain('gone'));
        // An interrupted run has no owner to send events: nothing to follow until it is resumed.
        if (((run.status === 'running' && !run.interrupted) || run.status === 'waiting') && !stopFollowing) {
          const view = new RunView(run.run_id, run.chain, run.input, run.started_at, () => undefined);
          live.current = view;
          const aboutWaits = new Set(['approval:requested', 'approval:decided', 'run:waiting', 'run:woken']);
          stopFollowing = followRun(id, (e) => (view.apply(e), redraw(), aboutWaits.has(e.type) && setAskAgain((n) => n + 1)), () => {
            setAskAgain((n) => n + 1);
            void api.run(id).then((final) => {
              if (stopped) return;
              live.current = undefined;
              setDetail(final);
            });
          });
        }
      } catch (e) {
        if (!stopped) setError(e instanceof ApiError && e.status === 404 ? `No run with id ${id} on this server.` : (e as Error).message);
      }
    };
    void load();
    return () => {
      stopped = true;
      stopFollowing?.();
      cancelAnimationFrame(frame);
    };
  }, [id, generation]);

  // While running, the clock moves the running bars.
  const liveStatus = live.current?.status ?? detail?.status;
  const running = (liveStatus === 'running' || liveStatus === 'waiting') && detail?.interrupted !== true;
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(() => setNow(Date.now()), 250);
    return () => clearInterval(timer);
  }, [running]);

  const shown: RunDetail | undefined = live.current ? mergeLive(live.current.detail(), detail) : detail;
  const statuses = useMemo(() => Object.fromEntries(Object.entries(shown?.steps ?? {}).map(([k, s]) => [k, s.status])), [shown]);

  if (error) return <section><h1 tabIndex={-1}>Run</h1><p class="notice error" role="alert">{error}</p><a href="#/">All runs</a></section>;
  if (!shown) return <section><h1 tabIndex={-1}>Run</h1><p>Loading…</p></section>;

  const act = async (what: 'cancel' | 'resume' | 'rerun' | { from: string }): Promise<void> => {
    setNotice(undefined);
    try {
      if (typeof what === 'object') {
        const { run_id } = await api.rerun(shown.run_id, { from: what.from });
        location.hash = `#/runs/${encodeURIComponent(run_id)}`;
      } else if (what === 'cancel') {
        await api.cancel(shown.run_id);
        setNotice({ kind: 'info', text: 'Cancelled.' });
      } else if (what === 'resume') {
        const { run_id } = await api.resume(shown.run_id);
        if (run_id === id) setGeneration((n) => n + 1);
        else location.hash = `#/runs/${encodeURIComponent(run_id)}`;
      } else {
        const input = shown.input_truncated !== undefined ? await api.input(shown.run_id) : shown.input;
        const { run_id } = await api.start(shown.chain, input ?? {});
        location.hash = `#/runs/${encodeURIComponent(run_id)}`;
      }
    } catch (e) {
      setNotice({ kind: 'error', text: e instanceof ApiError ? `${e.code}: ${e.message}` : (e as Error).message });
    }
  };

  const end = shown.finished_at ?? (shown.interrupted ? shown.started_at + (shown.duration_ms ?? 0) : now);
  return (
    <section class="run" data-status={shown.status} data-interrupted={shown.interrupted ? 'true' : undefined}>
      <div class="run-head">
        <h1 tabIndex={-1}>
          {shown.chain} <span class="mono muted">{shown.run_id}</span>
        </h1>
        <div class="facts">
          <StatusBadge status={shown.interrupted ? 'interrupted' : shown.status} />
          <span>started {formatTime(shown.started_at)}</span>
          <span>{formatDuration(shown.duration_ms ?? end - shown.started_at)}</span>
          {shown.rerun_of !== undefined && (
            <span class="origin">
              re-run of <a class="mono" href={`#/runs/${encodeURIComponent(shown.rerun_of)}`}>{shown.rerun_of}</a>
              {shown.rerun_from !== undefined ? <> from step <code>{shown.rerun_from}</code></> : ' (every step)'}
            </span>
          )}
        </div>
        <div class="actions">
          <button type="button" onClick={() => void act('cancel')} disabled={(shown.status !== 'running' && shown.status !== 'waiting') || shown.interrupted}>Cancel</button>
          <button type="button" onClick={() => void act('resume')} disabled={(shown.status === 'running' && !shown.interrupted) || shown.status === 'succeeded' || shown.status === 'waiting'}>Resume</button>
          <button type="button" onClick={() => void act('rerun')}>Re-run with same input</button>
        </div>
      </div>
      {(shown.reruns?.length ?? 0) > 0 && (
        <p class="reruns">
          Re-runs:{' '}
          {shown.reruns!.map((r, k) => (
            <>
              {k > 0 && ', '}
              <a class="mono" href={`#/runs/${encodeURIComponent(r)}`}>{r}</a>
            </>
          ))}
        </p>
      )}
      {shown.interrupted && (
        <p class="notice interrupted" role="status">
          Interrupted: the process that ran it is gone, and nothing finishes it until it is resumed. Resume continues it from its recorded steps (or run <code>toolchain resume {shown.run_id}</code>).
        </p>
      )}
      {shown.status === 'waiting' && (
        <p class="notice waiting" role="status">
          Waiting: this run holds nothing while it <WaitingFor run={shown} />. It goes on by itself when its wait is over.
        </p>
      )}
      {approvals.length > 0 && (
        <div class="panel approvals-panel">
          <h2>Waiting for a decision</h2>
          <div class="approvals">
            {approvals.map((a) => (
              <ApprovalCard
                key={a.id}
                approval={a}
                showRun={false}
                onDecided={(d) => {
                  if (d?.decision !== undefined) setNotice({ kind: 'info', text: `${d.decision.approved ? 'Approved' : 'Denied'} by ${d.decision.by}; the run goes on by itself.` });
                  setAskAgain((n) => n + 1);
                }}
              />
            ))}
          </div>
        </div>
      )}
      {notice && <p class={`notice ${notice.kind}`} role={notice.kind === 'error' ? 'alert' : 'status'}>{notice.text}</p>}
      {shown.error && (
        <p class="notice error run-error" role="alert">
          <code>{shown.error.code}</code> {shown.error.message}
          {shown.error.step !== undefined && <> (step <button type="button" class="link" onClick={() => setSelected(shown.error!.step)}>{shown.error.step}</button>)</>}
        </p>
      )}
      <div class="run-body">
        <div class="run-main">
          <div class="panel dag-panel">
            <h2>Steps</h2>
            {chain === 'gone' ? (
              <p class="muted">The chain '{shown.chain}' is not loaded on this server any more; the timeline below still shows every step.</p>
            ) : chain ? (
              <DagView graph={chain.graph} statuses={statuses} selected={selected} onSelect={setSelected} />
            ) : (
              <p class="muted">Loading the chain…</p>
            )}
          </div>
          <div class="panel">
            <h2>Timeline</h2>
            <Gantt run={shown} now={now} selected={selected} onSelect={setSelected} />
          </div>
        </div>
        <div class="panel detail-panel">
          <StepPanel run={shown} stepKey={selected} onRerunFrom={shown.status !== 'running' && shown.status !== 'waiting' ? (from) => void act({ from }) : undefined} />
        </div>
      </div>
    </section>
  );
}

/** The live view lacks what only the server computes (step inputs, a re-run's kept steps): take it from the last fetched record. */
function mergeLive(liveDetail: RunDetail, fetched: RunDetail | undefined): RunDetail {
  if (!fetched) return liveDetail;
  const steps = { ...liveDetail.steps };
  for (const [key, s] of Object.entries(steps)) {
    const known = fetched.steps[key];
    // A kept step has no events: only the server's record knows it.
    if (known?.kept_from !== undefined && s.status === 'pending') {
      steps[key] = known;
      continue;
    }
    const input = known?.input;
    if (input !== undefined && s.input === undefined) steps[key] = { ...s, input };
  }
  // The page's own view started from the fetched record: the resumes it knew of are the server's.
  const origin = { ...(fetched.rerun_of !== undefined ? { rerun_of: fetched.rerun_of } : {}), ...(fetched.rerun_from !== undefined ? { rerun_from: fetched.rerun_from } : {}), ...(fetched.reruns !== undefined ? { reruns: fetched.reruns } : {}) };
  return { ...liveDetail, ...origin, steps, resumes: liveDetail.resumes.length ? liveDetail.resumes : fetched.resumes };
}
