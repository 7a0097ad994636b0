import { formatDuration, formatTime, type RunDetail } from './api.js';
import type { Truncated } from '../../src/serve/run-service.js';
import { StatusBadge } from './status.js';

// The selected step: status, attempts, timing, error, input, output and each attempt.

const LIMIT = 20_000;

function Json({ value }: { value: unknown }) {
  const text = JSON.stringify(value, null, 2) ?? 'undefined';
  return <pre class="json">{text.length > LIMIT ? `${text.slice(0, LIMIT)}\n… (${text.length - LIMIT} more characters)` : text}</pre>;
}

/** A value the server left out of the run's view for its size: how large, and where to read it whole. */
function LeftOut({ value }: { value: Truncated }) {
  return (
    <p class="muted left-out">
      Left out for its size ({value.bytes.toLocaleString()} bytes of JSON): <a href={value.href.replace(/^\//, '')} target="_blank" rel="noopener">open it whole</a>
    </p>
  );
}

export function StepPanel({ run, stepKey }: { run: RunDetail; stepKey: string | undefined }) {
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
  const step = run.steps[stepKey];
  if (!step) return <><h2>{stepKey}</h2><p class="muted">Not started.</p></>;
  return (
    <div class="step-detail" data-step={stepKey} aria-live="polite">
      <h2>
        {stepKey} <StatusBadge status={step.status} />
      </h2>
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
