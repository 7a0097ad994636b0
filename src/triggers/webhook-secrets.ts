import type { Diagnostic } from '../common/errors.js';
import type { ChainPlan } from '../compiler/index.js';

// Which webhook triggers could not verify a delivery where they are checked: their secret's
// variable is not set in that environment. `validate` and `serve` say so as warnings at the
// `secret_env` key (validate may run where serve's secrets are not; serve's route refuses such
// deliveries with 503 WEBHOOK_SECRET_MISSING). Only the variable's name is ever shown.

export function missingSecrets(plans: Iterable<ChainPlan>, env: Readonly<Record<string, string | undefined>>): Diagnostic[] {
  const problems: Diagnostic[] = [];
  for (const plan of plans) {
    for (const t of plan.triggers ?? []) {
      const w = t.webhook;
      if (w === undefined || !t.enabled) continue;
      const value = env[w.secretEnv];
      if (value !== undefined && value !== '') continue;
      problems.push({
        code: 'WEBHOOK_SECRET_MISSING',
        severity: 'warning',
        message: `webhook /hooks/${w.path} reads its secret from ${w.secretEnv}, which is not set here: the server refuses its deliveries (503) until it is set in the server's environment`,
        file: plan.file,
        pointer: `${t.pointer}/webhook/secret_env`,
        line: w.secretLine,
        col: w.secretCol,
      });
    }
  }
  return problems;
}
