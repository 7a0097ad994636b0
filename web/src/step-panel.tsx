import { formatDuration, formatTime, type RunDetail } from './api.js';
import type { Truncated } from '../../src/serve/run-service.js';
import { StatusBadge } from './status.js';

// The selected step: status, attempts, timing, error, input, output, each attempt, and a repeat
// step's rounds.

const LIMIT = 20_000;

function Json({ value }: { value: unknown }) {
  const text = JSON.stringify(value, null, 2) ?? 'undefined';
  return <pre class="json">{text.length > LIMIT ? `${text.slice(0, LIMIT)}\n… (${text.length - LIMIT} more characters)` : text}</pre>;
}

/** A value on one line, cut short: a round's output in its row. */
function short(value: unknown): string {
  const text = JSON.stringify(value) ?? '';
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

/** A value the server left out of the run's view for its size: how large, and where to read it whole. */
function LeftOut({ value }: { value: Truncated }) {
  return (
    <p class="muted left-out">
      Left out for its size ({value.bytes.toLocaleString()} bytes of JSON): <a href={value.href.replace(/^\//, '')} target="_blank" rel="noopener">open it whole</a>
    </p>
  );
}

/** `onRerunFrom`: given when the run has ended, so that a step of it can be re-run from. */
export function StepPanel({ run, stepKey, onRerunFrom }: { run: RunDetail; stepKey: string | undefined; onRerunFrom?: ((step: string) => void) | undefined }) {
  if (stepKey === undefined) {
    return (
      <>
        <h2>Run</h2>
        <p class="muted">Select a step in the graph or the timeline to see its input, output, error and attempts.</p>
        <h3>Input</h3>
        {run.input_truncated ? <LeftOut value={run.input_truncated} /> : <Json value={run.input} />}
        {run.status === 'succeeded' && (
          <>
            <h3>Outputs</h3>
            {run.outputs_truncated ? <LeftOut value={run.outputs_truncated} /> : <Json value={run.outputs} />}
          </>
        )}
      </>
    );
  }
  // Only a step of the run's own chain can be re-run from (not an element, a round or a sub-chain's step).
  const rerun = onRerunFrom !== undefined && !/[[›#]/.test(stepKey) ? (
    <button type="button" class="rerun-from" onClick={() => onRerunFrom(stepKey)} title="A new run: this step and everything after it run again; the other steps keep their outputs">
      Re-run from here
    </button>
  ) : undefined;
  const step = run.steps[stepKey];
  if (!step) return <><h2>{stepKey}</h2><p class="muted">Not started.</p>{rerun}</>;
  // A repeat step's rounds, in order: `STEP#1`, `STEP#2`, …
  const rounds = Object.entries(run.steps)
    .filter(([k]) => k.startsWith(`${stepKey}#`) && /^\d+$/.test(k.slice(stepKey.length + 1)))
    .sort(([a], [b]) => Number(a.slice(stepKey.length + 1)) - Number(b.slice(stepKey.length + 1)));
  return (
    <div class="step-detail" data-step={stepKey} aria-live="polite">
      <h2>
        {stepKey} <StatusBadge status={step.status} />
      </h2>
      {rerun}
      {step.kept_from !== undefined && (
        <p class="notice kept">
          Kept: this re-run did not run the step; its output is the one run <a class="mono" href={`#/runs/${encodeURIComponent(step.kept_from)}`}>{step.kept_from}</a> recorded.
        </p>
      )}
      <dl class="facts-list">
        {step.phase && (
          <>
            <dt>Part</dt>
            <dd>{step.phase === 'compensate' ? `compensation of step ${stepKey.replace(/~compensate$/, '')}` : `${step.phase} (failure handling)`}</dd>
          </>
        )}
        <dt>Attempts</dt>
        <dd>{step.attempts}</dd>
        <dt>Duration</dt>
        <dd>{step.status === 'running' ? 'running' : formatDuration(step.duration_ms)}</dd>
        {step.started_at !== undefined && (
          <>
            <dt>Started</dt>
            <dd>{formatTime(step.started_at)}</dd>
          </>
        )}
        {step.skip_reason && (
          <>
            <dt>Skipped</dt>
            <dd>{step.skip_reason === 'when' ? 'its when condition was false' : 'a step it needs was skipped'}</dd>
          </>
        )}
      </dl>
      {step.error && (
        <div class="notice error step-error">
          <code>{step.error.code}</code> {step.error.message}
        </div>
      )}
      {(step.input !== undefined || step.input_truncated) && (
        <>
          <h3>Input</h3>
          {step.input_truncated ? <LeftOut value={step.input_truncated} /> : <Json value={step.input} />}
        </>
      )}
      {(step.output !== undefined || step.output_truncated) && (
        <>
          <h3>Output</h3>
          {step.output_truncated ? <LeftOut value={step.output_truncated} /> : <Json value={step.output} />}
        </>
      )}
      {rounds.length > 0 && (
        <>
          <h3>Rounds</h3>
          <table class="attempts rounds">
            <thead>
              <tr><th scope="col">Round</th><th scope="col">Status</th><th scope="col">Took</th><th scope="col">Output</th></tr>
            </thead>
            <tbody>
              {rounds.map(([k, r]) => (
                <tr data-round={k}>
                  <td>{k.slice(stepKey.length + 1)}</td>
                  <td><StatusBadge status={r.status} /></td>
                  <td>{formatDuration(r.duration_ms)}</td>
                  <td class="mono">{r.error ? <><code>{r.error.code}</code> {r.error.message}</> : short(r.output)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
      {step.timeline.length > 0 && (
        <>
          <h3>Attempts</h3>
          <table class="attempts">
            <thead>
              <tr><th scope="col">#</th><th scope="col">Status</th><th scope="col">Took</th><th scope="col">Error</th></tr>
            </thead>
            <tbody>
              {step.timeline.map((a) => (
                <tr>
                  <td>{a.attempt}{a.fallback ? ` (fallback: ${a.fallback})` : ''}{a.item !== undefined ? ` item ${a.item}` : ''}</td>
                  <td><StatusBadge status={a.status} /></td>
                  <td>{a.duration_ms !== undefined ? formatDuration(a.duration_ms) : '…'}</td>
                  <td>{a.error ? <><code>{a.error.code}</code> {a.error.message}</> : ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </div>
  );
}
