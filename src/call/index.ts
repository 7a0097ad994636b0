// One tool call: prepare → approve → invoke under a deadline → classify → retry
// with backoff → fallback. Steps, for_each elements, agent tool calls, batches of a model's calls
// and the MCP server all call through here.
export { performCall } from './call.js';
export { callForOutcome, failedOutcome, type CallOutcome, type OutcomeOptions } from './call-outcome.js';
export { CallContext, toStepError, CallFailure } from './call-context.js';
export { backoffDelay, isRetryable } from './backoff.js';
export { approvedBy, checkApproval, type ApprovalInfo } from './approval.js';
export type { ApprovalDetail, RunWaits, WaitAnswer, WaitAsk } from './waits.js';
export type {
  BackoffPolicy,
  Callee,
  CallOwner,
  CallSite,
  CallWatcher,
  FallbackCall,
  InvalidWording,
  RetryPolicy,
  RetryReport,
} from './types.js';
