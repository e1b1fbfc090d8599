// Builds the console (console/index.html + src/) into console/build/, which is committed: the
// service serves it as it is (src/routes/console.ts), so `npm ci && npm start` needs no build
// step, and test/console/build.test.ts fails when the committed build no longer matches the source.
// `npm run build:console` rebuilds it; `npm run console:dev` serves the source with the API proxied.
// `npm run build` runs it with --outDir: the source goes straight into dist/console/build/, leaving the
// committed build alone: emptying it in place raced the tests that serve it.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  // served under /console/ (absolute asset URLs: /console and /console/ load the same page)
  base: '/console/',
  publicDir: false,
  logLevel: 'warn',
  build: {
    outDir: 'build',
    emptyOutDir: true,
    assetsDir: 'assets',
    // the CSP allows no inline script: every asset is a file; no preload polyfill either
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    reportCompressedSize: false,
  },
  server: { proxy: { '/api': 'http://127.0.0.1:3000' } },
});
