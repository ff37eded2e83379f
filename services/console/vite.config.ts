import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';
import { precompress } from './precompress.js';

// Served by the gateway under /console; everything is bundled (no CDN at run time). Hashed assets
// get .br and .gz twins, sent by the gateway per Accept-Encoding.
export default defineConfig({
  base: '/console/',
  plugins: [react(), precompress()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 1200 },
});
