import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: ['libs/*', 'services/*', 'test/e2e'],
  },
});
