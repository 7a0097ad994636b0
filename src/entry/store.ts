// `toolchain/store`: run stores opened from their URL (memory:, sqlite:FILE, postgres://…,
// redis://…), and the contract every driver meets (every type of store/types.ts).

export { openStore } from '../store/index.js';
export type * from '../store/types.js';
