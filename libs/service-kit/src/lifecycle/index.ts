// The service lifecycle pieces of this round (issue 21): re-exported from the package root once the
// branches that change src/index.ts have landed.
export { BatchedWriter, type BatchedWriterOptions } from './batched-writer.js';
export { Startup, startService } from './startup.js';
