import { chainNotFound, type ChainPlan } from '../compiler/index.js';
import { ToolchainError, suggestionSuffix, didYouMean } from '../common/errors.js';
import type { Project } from './load-project.js';

/** The compiled chain by name, or an error that says why it cannot be used. */
export function findChain(project: Project, name: string): ChainPlan {
  const plan = project.chains.plans.get(name);
  if (plan) return plan;
  const file = project.chains.files.find((f) => f.name === name);
  if (file) {
    const own = project.chains.diagnostics.filter((d) => d.file === file.file);
    throw new ToolchainError('SCHEMA_INVALID', `chain '${name}' has errors`, own);
  }
  const suggestion = didYouMean(name, project.chains.files.flatMap((f) => (f.name ? [f.name] : [])));
  const { code, message, diagnostics } = chainNotFound(project.chains, name, suggestionSuffix(suggestion));
  throw new ToolchainError(code, message, diagnostics);
}
