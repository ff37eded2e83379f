// Where the built console lives; the gateway serves this folder at /console.
import { fileURLToPath } from 'node:url';

export const consoleDistDir = fileURLToPath(new URL('./dist/', import.meta.url));
