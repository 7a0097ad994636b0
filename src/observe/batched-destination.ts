// A pino destination that gathers the lines written during one turn of the event loop and hands
// them on in one write. sonic-boom (pino's default destination) costs more per line
// than a run step is allowed for all of its metrics and logs (the observe bench); a string pushed
// on an array costs next to nothing. Lines keep their order; `flush()` writes what is pending at once (call it before
// the process exits).

export interface BatchedDestination {
  write(line: string): void;
  /** Writes what is pending now; `done` (pino's logger.flush passes one) is called after. */
  flush(done?: (error?: Error) => void): void;
}

/** Up to this many characters wait for the end of the turn; more are written at once. */
const MAX_PENDING = 64 * 1024;

export function createBatchedDestination(sink: (chunk: string) => void): BatchedDestination {
  let lines: string[] = [];
  let size = 0;
  let scheduled = false;
  const flush = (done?: (error?: Error) => void): void => {
    scheduled = false;
    if (lines.length > 0) {
      const chunk = lines.join('');
      lines = [];
      size = 0;
      sink(chunk);
    }
    done?.();
  };
  return {
    write(line: string): void {
      lines.push(line);
      size += line.length;
      if (size >= MAX_PENDING) flush();
      // (a flush already scheduled for this turn then finds nothing, or the lines written since)
      else if (!scheduled) {
        scheduled = true;
        setImmediate(() => flush());
      }
    },
    flush,
  };
}
