// The messages between the engine and an isolated plugin's worker (a thread or a child process).
// Everything crosses as a structured clone; one worker runs one call at a time, so output it
// writes belongs to the call in flight.

/** Where a tool's handler lives: the module file and, from `file#export`, the export. */
export interface HandlerRef {
  readonly tool: string;
  readonly file: string;
  readonly exportName?: string;
}

/** The plain fields of a handler's `ctx`; `signal` and `log` are rebuilt on the worker's side. */
export interface CallFields {
  readonly attempt: number;
  readonly run_id: string;
  readonly step: string;
  readonly idempotencyKey: string;
  readonly env: Readonly<Record<string, string | undefined>>;
}

export type ToWorker =
  /** Import these handlers now (eager loading), so that a broken module is reported at load. */
  | { readonly t: 'load'; readonly id: number; readonly handlers: readonly HandlerRef[] }
  | { readonly t: 'call'; readonly id: number; readonly handler: HandlerRef; readonly args: unknown; readonly ctx: CallFields }
  /** The module texts of this plugin version that other workers read already: read these, not the files. */
  | { readonly t: 'sources'; readonly files: readonly (readonly [string, string])[] }
  /** The call's signal fires on the worker's side with this reason. */
  | { readonly t: 'abort'; readonly id: number; readonly code: string; readonly message: string };

/** How a call failed on the worker's side. */
export type WireError =
  /** The handler threw (or rejected): its message and, if it had one, its string code. */
  | { readonly kind: 'thrown'; readonly message: string; readonly code?: string }
  /** The handler's module did not load, or has no such export. */
  | { readonly kind: 'load'; readonly message: string }
  /** The result could not be copied out: not JSON (where and why, as check-json says). */
  | { readonly kind: 'not-json'; readonly path: string; readonly reason: string };

export type FromWorker =
  | { readonly t: 'loaded'; readonly id: number; readonly problems: readonly { readonly tool: string; readonly message: string }[] }
  | { readonly t: 'done'; readonly id: number; readonly ok: true; readonly value: unknown }
  | { readonly t: 'done'; readonly id: number; readonly ok: false; readonly error: WireError }
  | { readonly t: 'log'; readonly id: number; readonly message: string; readonly fields?: Record<string, unknown> }
  /** It read a module file of the plugin from disk: this text is the version's from now on. */
  | { readonly t: 'source'; readonly file: string; readonly text: string }
  /** What the worker wrote to its stdout or stderr. */
  | { readonly t: 'out'; readonly stream: 'stdout' | 'stderr'; readonly text: string }
  /**
   * Its event loop ran empty with calls unsettled: nothing can settle `ids` any more; `waiting`
   * listen to their signal, so only the engine can (by aborting them).
   */
  | { readonly t: 'stalled'; readonly ids: readonly number[]; readonly waiting: readonly number[] }
  /** An exception nobody caught (a throw in a timer, a rejection nobody handled): the worker ends after this. */
  | { readonly t: 'crash'; readonly message: string };
