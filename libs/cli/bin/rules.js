#!/usr/bin/env node
// Committed (not built) so that `npm install` links the `rules` bin before dist/ exists.
try {
  await import('../dist/main.js');
} catch (err) {
  if (err?.code !== 'ERR_MODULE_NOT_FOUND' || !String(err.message).includes('dist/main.js')) throw err;
  process.stderr.write('rules: @arbiter/cli is not built yet; run `npm run build` first\n');
  process.exitCode = 2;
}
