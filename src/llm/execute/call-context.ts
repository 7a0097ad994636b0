import type { LogEntry } from '../../executor/types.js';
import type { ToolContext } from '../../registry/types.js';

// The `ctx` a tool receives when a model calls it (SPEC §3.1): its own AbortSignal, attempt
// number, the batch's run id, the call id as the step, and a log that tags lines with both. `env`
// is empty here on purpose: Tool.invoke replaces it with the variables the tool's manifest lists.

const NO_ENV: Readonly<Record<string, string | undefined>> = Object.freeze({});

export class CallContext implements ToolContext {
  readonly env = NO_ENV;
  readonly signal: AbortSignal;

  constructor(
    readonly run_id: string,
    readonly step: string,
    readonly attempt: number,
    signal: AbortSignal,
    private readonly sink: ((entry: LogEntry) => void) | undefined,
  ) {
    this.signal = signal;
  }

  log(message: string, fields?: Record<string, unknown>): void {
    try {
      this.sink?.({ timestamp: Date.now(), run_id: this.run_id, step: this.step, attempt: this.attempt, message, ...(fields ? { fields } : {}) });
    } catch {
      // A logger's failure is not the tool's.
    }
  }
}
