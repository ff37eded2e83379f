// The service lifecycle pieces (issue 21): also re-exported from the package root.
export { BatchedWriter, type BatchedWriterOptions } from './batched-writer.js';
export { Startup, startService } from './startup.js';
