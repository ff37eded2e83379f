/** Absolute path of the built console (`vite build` output), served by the gateway at `/console`. */
export declare const consoleDistDir: string;
