import { serversSetup } from '@arbiter/test-kit';
import { defineProject } from 'vitest/config';

// Each file starts its own stack of processes: run files one at a time on small machines.
export default defineProject({
  test: {
    name: 'e2e',
    globalSetup: [serversSetup],
    include: ['**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 90_000,
    fileParallelism: false,
  },
});
