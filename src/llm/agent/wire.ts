// The OpenAI chat-completions wire format, as far as the agent loop reads and writes it. Only the
// fields the loop uses are typed; responses are checked at run time (read-reply.ts), never trusted.

export interface FunctionDefinition {
  readonly type: 'function';
  readonly function: {
    readonly name: string;
    readonly description?: string;
    readonly parameters: Readonly<Record<string, unknown>>;
  };
}

export interface WireToolCall {
  readonly id: string;
  readonly type: 'function';
  readonly function: { readonly name: string; readonly arguments: string };
}

export type ChatMessage =
  | { readonly role: 'system'; readonly content: string }
  | { readonly role: 'user'; readonly content: string }
  | { readonly role: 'assistant'; readonly content: string | null; readonly tool_calls?: readonly WireToolCall[] }
  | { readonly role: 'tool'; readonly tool_call_id: string; readonly content: string };

export interface ChatRequest {
  readonly model: string;
  readonly messages: readonly ChatMessage[];
  /** Left out when the agent offers no tools: the API rejects an empty list. */
  readonly tools?: readonly FunctionDefinition[];
}

export type { TokenUsage } from '../../run-model/events.js';
import type { TokenUsage } from '../../run-model/events.js';

/** One response, reduced to what the loop needs. */
export interface ChatReply {
  readonly message: Extract<ChatMessage, { role: 'assistant' }>;
  readonly finish_reason: string | null;
  /** Zeros when the endpoint reports no usage (some local servers do not). */
  readonly usage: TokenUsage;
}
