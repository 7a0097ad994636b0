import pLimit from 'p-limit';
import { requestCompletion, type Endpoint } from './chat-request.js';
import { callOffered } from './call-offered.js';
import { offerTools } from './offer-tools.js';
import { raceSignal } from '../../common/race.js';
import type { AgentHost, AgentOutput, AgentRequest, AgentStopReason } from './types.js';
import { CALL_CONCURRENCY, MAX_CALLS_PER_TURN } from './agent-limits.js';
import { modelAllowList, modelKey } from './model-policy.js';
import { outputTranscript } from './output-transcript.js';
import type { ToolMessage } from '../execute/tool-message.js';
import { withTextCalls } from './text-calls.js';
import type { ChatMessage, ChatReply, TokenUsage } from './wire.js';

// The agent loop. Each turn sends the whole transcript to the model; an answer without
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
  const endpoint: Endpoint = { baseUrl: plan.baseUrl, apiKey: modelKey(host.step, plan.apiKeyEnv, host.env), allow: modelAllowList(host.env) };
  const offered = offerTools(plan.tools, host);
  const transcript: ChatMessage[] = [];
  if (messages.system !== undefined && messages.system !== '') transcript.push({ role: 'system', content: messages.system });
  transcript.push({ role: 'user', content: messages.prompt });
  let usage: TokenUsage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  let failures = 0;
  let text = '';

  const end = (turns: number, stop_reason: AgentStopReason): AgentOutput => {
    const kept = outputTranscript(transcript);
    return { text, turns, stop_reason, usage, transcript: kept.transcript, ...(kept.omitted > 0 ? { transcript_omitted: kept.omitted } : {}) };
  };

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

    // A tool that ignores its signal cannot hold the loop once the step is aborted. Past the cap,
    // calls are not run; each is still answered (the API wants an answer to every call), and
    // not counted as a failure of a tool.
    const run = calls.slice(0, MAX_CALLS_PER_TURN);
    const limit = pLimit(CALL_CONCURRENCY);
    const outcomes = await raceSignal(Promise.all(run.map((call) => limit(() => callOffered(call, turn, offered, host)))), host.signal);
    let tooMany = false;
    for (const o of outcomes) {
      transcript.push({ role: 'tool', tool_call_id: o.tool_call_id, content: o.content });
      failures = o.is_error ? failures + 1 : 0;
      if (failures >= plan.maxFailures) tooMany = true;
    }
    for (const call of calls.slice(MAX_CALLS_PER_TURN)) transcript.push({ role: 'tool', tool_call_id: call.id, content: notRun(calls.length) });
    if (tooMany) return end(turn, 'max_failures');
    if (turn >= plan.maxTurns) return end(turn, 'max_turns');
  }
}

function notRun(asked: number): ToolMessage['content'] {
  return JSON.stringify({ error: { code: 'TOO_MANY_CALLS', message: `not run: ${asked} tool calls in one turn, and at most ${MAX_CALLS_PER_TURN} run; ask for fewer at a time` } });
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
