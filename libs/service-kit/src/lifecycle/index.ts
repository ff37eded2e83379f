// The service lifecycle pieces: also re-exported from the package root.
export { BatchedWriter, type BatchedWriterOptions } from './batched-writer.js';
export { Startup, startService } from './startup.js';
