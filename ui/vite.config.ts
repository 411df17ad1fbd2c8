import { defineConfig } from 'vitest/config';
import { svelte } from '@sveltejs/vite-plugin-svelte';

// Tauri serves the built files; the dev server port is fixed so tauri.conf.json's devUrl can point at it.
export default defineConfig({
  plugins: [svelte()],
  clearScreen: false,
  server: { port: 5173, strictPort: true },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // Vite 8 rejects "esbuild" without the optional esbuild package (notes, pitfall 5).
    minify: true,
    sourcemap: false,
  },
  test: {
    projects: [
      // Pure logic and server-rendered components.
      { extends: true, test: { name: 'node', include: ['src/**/*.test.ts'], exclude: ['src/**/*.dom.test.ts'], environment: 'node' } },
      // Components mounted in a DOM (effects, boundaries, events): Svelte's client build.
      { extends: true, resolve: { conditions: ['browser'] }, test: { name: 'dom', include: ['src/**/*.dom.test.ts'], environment: 'happy-dom' } },
    ],
  },
});
