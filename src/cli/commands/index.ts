import type { Command } from 'commander';
import type { CommandContext } from '../main.js';
import { registerGraph } from './graph.js';
import { registerList } from './list.js';
import { registerValidate } from './validate.js';

/** Every command, each in its own module with a `register` function. */
export function registerCommands(program: Command, ctx: CommandContext): void {
  registerValidate(program, ctx);
  registerGraph(program, ctx);
  registerList(program, ctx);
}
