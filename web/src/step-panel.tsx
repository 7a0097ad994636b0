import { formatDuration, formatTime, type RunDetail } from './api.js';
import { StatusBadge } from './status.js';

// The selected step: status, attempts, timing, error, input, output and each attempt.

const LIMIT = 20_000;

function Json({ value }: { value: unknown }) {
  const text = JSON.stringify(value, null, 2) ?? 'undefined';
  return <pre class="json">{text.length > LIMIT ? `${text.slice(0, LIMIT)}\n… (${text.length - LIMIT} more characters)` : text}</pre>;
}

export function StepPanel({ run, stepKey }: { run: RunDetail; stepKey: string | undefined }) {
  if (stepKey === undefined) {
    return (
      <>
        <h2>Run</h2>
        <p class="muted">Select a step in the graph or the timeline to see its input, output, error and attempts.</p>
        <h3>Input</h3>
        <Json value={run.input} />
        {run.status === 'succeeded' && (
          <>
            <h3>Outputs</h3>
            <Json value={run.outputs} />
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
      {step.input !== undefined && (
        <>
          <h3>Input</h3>
          <Json value={step.input} />
        </>
      )}
      {step.output !== undefined && (
        <>
          <h3>Output</h3>
          <Json value={step.output} />
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
