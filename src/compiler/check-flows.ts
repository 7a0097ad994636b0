import type { Diagnostic } from '../common/errors.js';
import type { JsonSchema } from '../common/json.js';
import type { NameCatalogue } from './check-targets.js';
import type { CompiledFile } from './compile-chain.js';
import { checkFlow, inferOutputs, type ChainFlow, type ChainSignature, type Signatures, type ToolSignature } from './flow/index.js';

// The data-flow check over compiled files, against a tool catalogue that knows its
// tools' schemas. Sub-chains are signatures too: their inputs, and outputs inferred from their own
// flow (memoised; a chain on a sub-chain cycle, reported elsewhere, returns "anything").

/** The tool catalogue's schemas, when it has them (a ToolSet, or validate's static inspection). */
export function toolSignatures(tools: NameCatalogue | undefined): ((name: string) => ToolSignature | undefined) | undefined {
  if (!tools) return undefined;
  if (tools.signature) return (n) => tools.signature!(n);
  if (tools.get) return (n) => tools.get!(n);
  return undefined;
}

/** Chains by name (compiled files, or plans: both carry their flow) as signatures, with `tool`'s. */
export function chainSignatures(byName: ReadonlyMap<string, { readonly flow?: ChainFlow | undefined }>, tool: (name: string) => ToolSignature | undefined): Signatures {
  const outputs = new Map<string, JsonSchema>();
  const visiting = new Set<string>();
  const signatures: Signatures = {
    tool,
    chain(name): ChainSignature | undefined {
      const flow = byName.get(name)?.flow;
      if (!flow) return undefined;
      let out = outputs.get(name);
      if (out === undefined) {
        if (visiting.has(name)) return { inputs: flow.inputs, outputs: {} };
        visiting.add(name);
        out = inferOutputs(flow, signatures);
        visiting.delete(name);
        outputs.set(name, out);
      }
      return { inputs: flow.inputs, outputs: out };
    },
  };
  return signatures;
}

/** The file's diagnostics with the flow check's added (and the compiler's vaguer ones it replaces dropped). */
export function withFlowCheck(file: CompiledFile, signatures: Signatures): { diagnostics: Diagnostic[]; problems: Diagnostic[] } {
  if (!file.flow) return { diagnostics: [...file.diagnostics], problems: [] };
  const { diagnostics, supersedes } = checkFlow(file.flow, file.file, signatures);
  const kept = file.diagnostics.filter((d) => !(d.code === 'UNKNOWN_REFERENCE' && d.pointer !== undefined && supersedes.has(d.pointer)));
  return { diagnostics: [...kept, ...diagnostics], problems: [...diagnostics] };
}
