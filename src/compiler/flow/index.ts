// The data-flow check: facts taken from a chain at compile time, checked against the
// tools and chains installed when asked (validate), and a chain's outputs inferred as a schema.
export { checkFlow, type FlowCheck } from './check-flow.js';
export { extractFlow } from './extract-flow.js';
export type { ChainFlow, FlowEntry, FlowTarget, FlowValue, StepFlow } from './flow-facts.js';
export { inferOutputs } from './infer-outputs.js';
export type { ChainSignature, Signatures, ToolSignature } from './resolve-value.js';
