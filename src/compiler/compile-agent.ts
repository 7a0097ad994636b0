import type { Agent } from './chain-file.generated.js';
import type { AgentPlan } from './plan.js';

// An `agent` step's fixed settings, schema-checked already. Defaults follow what agent loops
// usually ship with: ten model turns, three failed tool calls in a row, no token budget.

export const DEFAULT_MAX_TURNS = 10;
export const DEFAULT_MAX_FAILURES = 3;

/** True when `agent` has what compiling needs (the schema check reports everything else). */
export function isWellFormedAgent(agent: unknown): agent is Agent {
  if (typeof agent !== 'object' || agent === null) return false;
  const a = agent as Record<string, unknown>;
  return typeof a.base_url === 'string' && typeof a.model === 'string' && typeof a.prompt === 'string';
}

export function compileAgent(agent: Agent): AgentPlan {
  return Object.freeze({
    // `…/v1/` and `…/v1` name the same API root; the path is appended to it.
    baseUrl: agent.base_url.replace(/\/+$/, ''),
    model: agent.model,
    ...(agent.api_key_env !== undefined ? { apiKeyEnv: agent.api_key_env } : {}),
    // Defensive: a file that failed the schema check is still compiled for its other problems.
    tools: Object.freeze(Array.isArray(agent.tools) ? agent.tools.filter((t): t is string => typeof t === 'string') : []),
    maxTurns: agent.max_turns ?? DEFAULT_MAX_TURNS,
    maxFailures: agent.max_failures ?? DEFAULT_MAX_FAILURES,
    ...(agent.budget_tokens !== undefined ? { budgetTokens: agent.budget_tokens } : {}),
    ...(agent.text_calls !== undefined ? { textCalls: agent.text_calls } : {}),
  });
}

/** The part of an agent that is resolved per run, as an input_map would be: the messages. */
export function agentMessages(agent: Agent): Record<string, unknown> {
  return agent.system !== undefined ? { prompt: agent.prompt, system: agent.system } : { prompt: agent.prompt };
}
