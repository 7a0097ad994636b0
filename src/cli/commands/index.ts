import type { Command } from 'commander';
import type { CommandContext } from '../main.js';
import { registerApprovals } from './approvals.js';
import { registerEmit } from './emit.js';
import { registerGraph } from './graph.js';
import { addHelpTexts } from './help-text.js';
import { registerInit } from './init.js';
import { registerList } from './list.js';
import { registerMcp } from './mcp.js';
import { registerRerun } from './rerun.js';
import { registerResume } from './resume.js';
import { registerRun } from './run.js';
import { registerRuns } from './runs.js';
import { registerServe } from './serve.js';
import { registerTest } from './test.js';
import { registerTools } from './tools.js';
import { registerTriggers } from './triggers.js';
import { registerValidate } from './validate.js';
import { registerWatch } from './watch.js';
import { registerWorker } from './worker.js';

/** Every command, each in its own module with a `register` function. */
export function registerCommands(program: Command, ctx: CommandContext): void {
  registerValidate(program, ctx);
  registerGraph(program, ctx);
  registerList(program, ctx);
  registerMcp(program, ctx);
  registerRun(program, ctx);
  registerResume(program, ctx);
  registerRerun(program, ctx);
  registerRuns(program, ctx);
  registerEmit(program, ctx);
  registerApprovals(program, ctx);
  registerTriggers(program, ctx);
  registerTools(program, ctx);
  registerInit(program, ctx);
  registerWatch(program, ctx);
  registerServe(program, ctx);
  registerTest(program, ctx);
  registerWorker(program, ctx);
  addHelpTexts(program);
}
