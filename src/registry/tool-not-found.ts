import { closestNames, ToolchainError } from '../common/errors.js';
import type { ToolSet } from './types.js';

// TOOL_NOT_FOUND, worded for whoever asked: the plugin that used to provide the tool, if one did,
// and the closest names that exist now.

export function toolNotFound(tools: ToolSet, name: string): ToolchainError {
  const former = tools.formerProvider(name);
  const closest = closestNames(name, tools.names(), 3);
  const gone = former ? `; it was provided by plugin '${former}', which no longer provides it` : '';
  const hint = closest.length > 0 ? `; closest: ${closest.join(', ')}` : '; no tools are registered';
  return new ToolchainError('TOOL_NOT_FOUND', `unknown tool '${name}'${gone}${hint}`, [
    { code: 'TOOL_NOT_FOUND', severity: 'error', message: `unknown tool '${name}'${gone}`, ...(closest[0] ? { suggestion: closest[0] } : {}) },
  ]);
}
