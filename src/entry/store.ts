// `toolchain/store`: run stores opened from their URL (memory:, sqlite:FILE, postgres://…,
// redis://…), and the contract every driver meets.

export { openStore } from '../store/open-store.js';
export type {
  Claim,
  ClaimOutcome,
  CreateOutcome,
  Durability,
  NewRun,
  RunEnd,
  RunFilter,
  RunStatus,
  RunStore,
  StepBatch,
  StoreOptions,
  StoredRun,
  StoredStep,
} from '../store/types.js';
