import { defineProject } from 'vitest/config';

// These tests start servers of their own; CI runs them beside the end-to-end suite, so a start can take
// far longer than vitest's 5 s default on a loaded machine.
export default defineProject({
  test: { name: 'test-kit', globalSetup: ['./src/global-setup.ts'], include: ['test/**/*.test.ts'], testTimeout: 30_000 },
});
