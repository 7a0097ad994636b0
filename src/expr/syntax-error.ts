/**
 * A malformed path or expression. `index` is the 0-based offset in the source where the problem
 * was seen, so callers can point at it (the compiler turns it into a line and column).
 */
export class ExprSyntaxError extends Error {
  readonly index: number;

  constructor(message: string, index: number) {
    super(message);
    this.name = 'ExprSyntaxError';
    this.index = index;
  }
}
