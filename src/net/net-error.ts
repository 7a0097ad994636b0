// What the outbound HTTP layer fails with: an Error with a string `code` (ADDRESS_REFUSED,
// BAD_ALLOW_LIST, RESPONSE_TOO_LARGE, BAD_RESPONSE) that a chain's `retry_on` can name and that
// callers pass on as it is.

export class NetError extends Error {
  readonly code: string;

  constructor(code: string, message: string) {
    super(message);
    this.name = 'NetError';
    this.code = code;
  }
}
