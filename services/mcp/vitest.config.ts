import { defineProject } from 'vitest/config';

export default defineProject({
  test: { name: 'mcp', include: ['test/**/*.test.ts'], testTimeout: 20_000, hookTimeout: 60_000 },
});
