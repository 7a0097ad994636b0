import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // PostgreSQL and Redis answer, or the run stops at once with one line naming what is missing.
    globalSetup: ['test/global-setup.ts'],
    // Child-process CLI tests and real file watchers need more than the 5 s default on 2 cores.
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
