import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { E2E, UNIT } from './test/projects.js';

// Three projects (test/projects.ts says which file is which): `npm test` runs them all,
// `npm run test:unit` the first alone, with no build and no services.
const services = ['test/global-setup.ts']; // PostgreSQL and Redis answer, or the run stops at once with one line

export default defineConfig({
  // A test that imports a shipped plugin's module directly gets toolchain/plugin as the engine hands
  // it to plugins it loads: the sources' own.
  resolve: { alias: { 'toolchain/plugin': fileURLToPath(new URL('./src/plugin.ts', import.meta.url)) } },
  test: {
    projects: [
      { extends: true, test: { name: 'unit', include: UNIT, setupFiles: ['test/helpers/unit-guard.ts'], testTimeout: 30_000 } },
      // Child processes and real file watchers need more than the 5 s default on 2 cores.
      { extends: true, test: { name: 'integration', include: ['test/**/*.test.ts'], exclude: [...UNIT, ...E2E], globalSetup: services, testTimeout: 30_000, hookTimeout: 30_000 } },
      { extends: true, test: { name: 'e2e', include: E2E, globalSetup: services, testTimeout: 120_000, hookTimeout: 60_000 } },
    ],
  },
});
