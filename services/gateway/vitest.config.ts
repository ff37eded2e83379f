import { serversSetup } from '@arbiter/test-kit';
import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'gateway',
    globalSetup: [serversSetup],
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 60_000,
  },
});
