// How much work one evaluation of a JSONPath may do. Most paths do work in proportion to the
// document, but some grow faster: `$..*..*` visits every node below every node (the square of a
// deep document), and filters that hold `..` queries do the same. A tool's output is data nobody
// vetted, so each evaluation carries a budget: every node visited, selected or tested, and every
// 64 characters a regular expression reads, spends one unit; an evaluation that runs out stops
// with an error (the step then fails with VALIDATION_FAILED) instead of holding the engine.

export const MAX_PATH_WORK = 10_000_000;

export interface Budget {
  left: number;
}

export function newBudget(): Budget {
  return { left: MAX_PATH_WORK };
}

export function spend(budget: Budget, units: number): void {
  budget.left -= units;
  if (budget.left < 0) {
    throw new Error(`the JSONPath did more than ${MAX_PATH_WORK.toLocaleString('en')} steps of work on this data (a path such as $..*..* grows with the square of the document): narrow it`);
  }
}
