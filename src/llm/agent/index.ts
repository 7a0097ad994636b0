// Agent steps: the loop against an OpenAI-compatible chat endpoint. The executor runs
// it for a step with `agent:`; the host interface keeps it free of runs, steps and attempts.
export { runAgent } from './agent-loop.js';
export { ModelError, type ModelErrorCode } from './model-error.js';
export type { TextCallsNote, TextCallsMode } from './text-calls.js';
export type {
  AgentHost,
  AgentMessages,
  AgentOutput,
  AgentPlan,
  AgentRequest,
  AgentStopReason,
  AgentTarget,
  AgentToolCall,
  AgentTurn,
  ChatMessage,
  TokenUsage,
} from './types.js';
