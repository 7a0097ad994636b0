import { closestNames, ToolchainError } from '../common/errors.js';
import type { ToolSet } from './types.js';

// TOOL_NOT_FOUND, worded for whoever asked: the inactive plugin that has the tool and the unmet
// requirement that keeps it inactive, or the plugin that used to provide it, and the closest
// names that exist now.

export function toolNotFound(tools: ToolSet, name: string): ToolchainError {
  const former = tools.formerProvider(name);
  const inactive = tools.inactiveProvider?.(name);
  const failed = tools.failedTool?.(name);
  const closest = closestNames(name, tools.names(), 3);
  const gone = failed
    ? `; declared by plugin '${failed.plugin}', failed to load: ${failed.reason}`
    : inactive
    ? `; plugin '${inactive.plugin}' provides it but is inactive: ${inactive.reason}`
    : former
      ? `; it was provided by plugin '${former}', which no longer provides it`
      : '';
  const hint = closest.length > 0 ? `; closest: ${closest.join(', ')}` : '; no tools are registered';
  return new ToolchainError('TOOL_NOT_FOUND', `unknown tool '${name}'${gone}${hint}`, [
    { code: 'TOOL_NOT_FOUND', severity: 'error', message: `unknown tool '${name}'${gone}`, ...(closest[0] ? { suggestion: closest[0] } : {}) },
  ]);
}
