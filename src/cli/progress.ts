import type { RunEvent } from '../executor/index.js';

// Live progress on a terminal: one line per step, redrawn in place with a few ANSI codes (cursor
// up, clear line).

interface Line {
  label: string;
  state: 'running' | 'retrying' | 'succeeded' | 'failed' | 'skipped';
  detail: string;
}

const MARK: Record<Line['state'], string> = {
  running: '\u001b[36m…\u001b[0m',
  retrying: '\u001b[33m↻\u001b[0m',
  succeeded: '\u001b[32m✓\u001b[0m',
  failed: '\u001b[31m✗\u001b[0m',
  skipped: '\u001b[90m–\u001b[0m',
};

export function createProgress(out: NodeJS.WritableStream): { onEvent: (e: RunEvent) => void; done: () => void } {
  const lines = new Map<string, Line>();
  // A sub-chain's steps are labelled with the step that runs it (`first › locate`): sub-chains
  // run side by side, so their rows interleave and indentation alone would not say whose they are.
  const prefix = new Map<string, string>();
  let drawn = 0;
  const ms = (n: number): string => (n < 1000 ? `${Math.round(n)}ms` : `${(n / 1000).toFixed(1)}s`);
  const draw = (): void => {
    let text = drawn > 0 ? `\u001b[${drawn}A` : '';
    for (const line of lines.values()) text += `\u001b[2K${MARK[line.state]} ${line.label}${line.detail ? `  \u001b[90m${line.detail}\u001b[0m` : ''}\n`;
    drawn = lines.size;
    out.write(text);
  };
  const onEvent = (e: RunEvent): void => {
    if (e.type === 'run:started') {
      prefix.set(e.run_id, e.parent ? `${prefix.get(e.parent.run_id) ?? ''}${e.parent.step} › ` : '');
      return;
    }
    if (e.type === 'run:finished') return;
    const key = `${e.run_id}/${e.step}`;
    const label = `${prefix.get(e.run_id) ?? ''}${e.step}`;
    const line = lines.get(key) ?? { label, state: 'running', detail: '' };
    lines.set(key, line);
    switch (e.type) {
      case 'step:started':
        line.state = 'running';
        break;
      case 'step:retrying':
        line.state = 'retrying';
        line.detail = `attempt ${e.attempt} failed (${e.error.code}); ${e.fallback ? `fallback: ${e.fallback}` : `retrying in ${ms(e.delay_ms)}`}`;
        break;
      case 'step:succeeded':
        line.state = 'succeeded';
        line.detail = `${ms(e.duration_ms)}${e.attempts > 1 ? `, ${e.attempts} attempts` : ''}${e.fallback ? `, fallback ${e.fallback}` : ''}`;
        break;
      case 'step:failed':
        line.state = 'failed';
        line.detail = `${e.error.code} after ${ms(e.duration_ms)}${e.attempts > 1 ? `, ${e.attempts} attempts` : ''}`;
        break;
      case 'step:skipped':
        line.state = 'skipped';
        line.detail = e.reason === 'when' ? 'skipped (when)' : 'skipped (a step it needs was skipped)';
        break;
    }
    draw();
  };
  return { onEvent, done: () => undefined };
}
