import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// Served by the gateway under /console; everything is bundled (no CDN at run time).
export default defineConfig({
  base: '/console/',
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 1200 },
});
