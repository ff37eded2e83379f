import { serversSetup } from '@arbiter/test-kit';
import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'execution',
    globalSetup: [serversSetup],
    include: ['test/**/*.test.ts'],
    // Several tests start an execution service (worker threads loading the engine): on a loaded
    // 2-core machine that alone can pass vitest's 5 s default.
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
