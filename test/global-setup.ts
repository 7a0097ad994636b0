import { missingServices } from './helpers/services.js';

// Before any test file runs: the services the suite needs answer, or the run ends here with one
// line per missing service (vitest would print a thrown error with its banner and stack).
export default async function setup(): Promise<void> {
  const missing = await missingServices();
  if (missing.length === 0) return;
  for (const line of missing) process.stderr.write(`${line}\n`);
  process.exit(1);
}
