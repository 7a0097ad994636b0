// The run store: open one from its URL; the contract every driver meets.
export { openStore } from './open-store.js';
export { BLOB_THRESHOLD } from './step-codec.js';
export { STORE_URL_FORMS } from './store-url.js';
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
} from './types.js';
export type { TriggerChange, TriggerControl, TriggerControlStore, TriggerPause } from './trigger-control-types.js';
export type { EventFilter, RecordedEvent, StoredEvent, StoredWait, WaitFilter, WaitKind, WaitOutcome, WaitRequest, WaitStore } from './wait-types.js';
