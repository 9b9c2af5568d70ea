import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The console, built into dist/public/console and served by the api process at
 * /console. No inline script or style: the page runs under a strict
 * Content-Security-Policy (script-src 'self').
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/public/console', import.meta.url)),
    emptyOutDir: true,
    // The module preload polyfill is an inline script: modern browsers need none.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    target: 'es2022',
  },
});
