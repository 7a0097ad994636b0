// What `process.exit` throws instead of exiting while the CLI, the MCP server or `serve` runs
// plugin code in its own thread (isolation: none): a handler may fail, but not end the process.
// The tool call that made it becomes TOOL_CRASHED (registry/build-tool.ts); one made outside any
// call is logged (cli/process-guard.ts).

export class ExitAttempt extends Error {
  readonly exitCode: unknown;

  constructor(exitCode: unknown) {
    super(`process.exit(${exitCode === undefined ? '' : String(exitCode)}) was called`);
    this.name = 'ExitAttempt';
    this.exitCode = exitCode;
  }
}
