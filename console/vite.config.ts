// The console is served by a2ad under /console/ (transport/console/console_routes.cpp): hashed
// assets in /console/assets/, no inline script or style (the server's Content-Security-Policy
// allows only 'self'), nothing fetched from another origin.
import { defineConfig } from 'vite';

declare const process: { env: Record<string, string | undefined> };

export default defineConfig({
  base: '/console/',
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: process.env.A2AD_CONSOLE_OUT ?? 'dist',
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    target: 'es2022',
  },
  test: { environment: 'node', include: ['src/**/*.test.ts'] },
} as Parameters<typeof defineConfig>[0]);
