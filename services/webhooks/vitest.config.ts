import { serversSetup } from '@arbiter/test-kit';
import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'webhooks',
    globalSetup: [serversSetup],
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
