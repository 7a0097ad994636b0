import { ToolchainError, type ErrorCode } from '../../common/errors.js';

// Failures of the model endpoint, as step errors whose codes `retry.retry_on` can name: engine
// codes, part of the one ErrorCode set.

export type ModelErrorCode = Extract<
  ErrorCode,
  /** 5xx, 408, or a response that is not a chat completion: worth retrying. */
  | 'MODEL_ERROR'
  /** 429: worth retrying after a backoff. */
  | 'RATE_LIMITED'
  /** 401 / 403, or the API key's environment variable is not set. */
  | 'MODEL_AUTH'
  /** Any other 4xx: the request itself is wrong; the message is the API's. */
  | 'MODEL_REJECTED'
  /** No HTTP answer at all (refused connection, DNS, reset). */
  | 'MODEL_UNREACHABLE'
  /** The endpoint is at an address the policy refuses (loopback, private, metadata…). */
  | 'MODEL_ADDRESS_REFUSED'
  /** `api_key_env` names a variable not declared for models, or one of the engine's own. */
  | 'MODEL_KEY_REFUSED'
  /** The reply is over the size the engine reads. */
  | 'MODEL_REPLY_TOO_LARGE'
>;

export class ModelError extends ToolchainError {
  declare readonly code: ModelErrorCode;
  /** The HTTP status, when there was one. */
  readonly status: number | undefined;

  constructor(code: ModelErrorCode, message: string, status?: number) {
    super(code, message);
    this.name = 'ModelError';
    this.status = status;
  }
}

export function codeForStatus(status: number): ModelErrorCode {
  if (status === 429) return 'RATE_LIMITED';
  if (status === 401 || status === 403) return 'MODEL_AUTH';
  if (status === 408 || status >= 500) return 'MODEL_ERROR';
  return 'MODEL_REJECTED';
}
