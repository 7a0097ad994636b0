import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // A test that imports a shipped plugin's module directly gets toolchain/plugin as the engine hands
  // it to plugins it loads: the sources' own.
  resolve: { alias: { 'toolchain/plugin': fileURLToPath(new URL('./src/plugin.ts', import.meta.url)) } },
  test: {
    include: ['test/**/*.test.ts'],
    // PostgreSQL and Redis answer, or the run stops at once with one line naming what is missing.
    globalSetup: ['test/global-setup.ts'],
    // Child-process CLI tests and real file watchers need more than the 5 s default on 2 cores.
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
