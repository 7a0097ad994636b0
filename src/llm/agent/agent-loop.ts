import { ModelError } from './model-error.js';
import { requestCompletion, type Endpoint } from './chat-request.js';
import { callOffered } from './call-offered.js';
import { offerTools } from './offer-tools.js';
import { raceSignal } from '../../common/race.js';
import type { AgentHost, AgentOutput, AgentRequest, AgentStopReason } from './types.js';
import { withTextCalls } from './text-calls.js';
import type { ChatMessage, ChatReply, TokenUsage } from './wire.js';

// SPEC §4: the agent loop. Each turn sends the whole transcript to the model; an answer without
// tool calls ends it ('final'). Otherwise every call of the turn is executed concurrently and
// answered with a `tool` message carrying its `tool_call_id`, then the limits are checked:
//   - budget: checked as soon as a response reports usage past `budget_tokens`, before its calls
//     run — spending stops the moment the budget is gone (the transcript then ends with the
//     unanswered calls);
//   - max_failures: `max_failures` failed calls in a row, counted in the order the model listed them;
//   - max_turns: after the calls of the last allowed turn (a turn is one response and its calls).
// Stopping at a limit is not a failure: the step succeeds and `stop_reason` says why it ended.
// Only the endpoint's own failures (HTTP errors, unreachable, malformed answers) fail the step.

export async function runAgent(request: AgentRequest, host: AgentHost): Promise<AgentOutput> {
  const { plan, messages } = request;
  const endpoint: Endpoint = { baseUrl: plan.baseUrl, apiKey: apiKey(plan.apiKeyEnv, host) };
  const offered = offerTools(plan.tools, host);
  const transcript: ChatMessage[] = [];
  if (messages.system !== undefined && messages.system !== '') transcript.push({ role: 'system', content: messages.system });
  transcript.push({ role: 'user', content: messages.prompt });
  let usage: TokenUsage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  let failures = 0;
  let text = '';

  const end = (turns: number, stop_reason: AgentStopReason): AgentOutput => ({ text, turns, stop_reason, usage, transcript });

  for (let turn = 1; ; turn++) {
    throwIfAborted(host.signal);
    const began = host.clock.now();
    const sent: ChatReply = await requestCompletion(
      endpoint,
      { model: plan.model, messages: transcript, ...(offered.definitions.length ? { tools: offered.definitions } : {}) },
      host.signal,
    );
    const reply = withTextCalls(sent, plan.textCalls, offered.definitions, turn);
    usage = add(usage, reply.usage);
    const calls = reply.message.tool_calls ?? [];
    transcript.push(reply.message);
    text = reply.message.content ?? '';
    host.onTurn({
      turn,
      model: plan.model,
      finish_reason: reply.finish_reason,
      content: reply.message.content,
      tool_calls: calls.map((c) => ({ id: c.id, name: c.function.name })),
      usage: reply.usage,
      total_tokens: usage.total_tokens,
      duration_ms: host.clock.now() - began,
      ...(reply.textCalls ? { text_calls: reply.textCalls } : {}),
    });
    if (calls.length === 0) return end(turn, 'final');
    if (plan.budgetTokens !== undefined && usage.total_tokens > plan.budgetTokens) return end(turn, 'budget');

    // A tool that ignores its signal cannot hold the loop once the step is aborted.
    const outcomes = await raceSignal(Promise.all(calls.map((call) => callOffered(call, turn, offered, host))), host.signal);
    let tooMany = false;
    for (const o of outcomes) {
      transcript.push({ role: 'tool', tool_call_id: o.tool_call_id, content: o.content });
      failures = o.is_error ? failures + 1 : 0;
      if (failures >= plan.maxFailures) tooMany = true;
    }
    if (tooMany) return end(turn, 'max_failures');
    if (turn >= plan.maxTurns) return end(turn, 'max_turns');
  }
}

function apiKey(envName: string | undefined, host: AgentHost): string | undefined {
  if (envName === undefined) return undefined;
  const key = host.env(envName);
  if (key === undefined || key === '') {
    throw new ModelError('MODEL_AUTH', `step '${host.step}' reads its API key from the environment variable ${envName}, which is not set`);
  }
  return key;
}

function add(a: TokenUsage, b: TokenUsage): TokenUsage {
  return {
    prompt_tokens: a.prompt_tokens + b.prompt_tokens,
    completion_tokens: a.completion_tokens + b.completion_tokens,
    total_tokens: a.total_tokens + b.total_tokens,
  };
}

function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw signal.reason;
}
