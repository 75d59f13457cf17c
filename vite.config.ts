import { sveltekit } from '@sveltejs/kit/vite';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  plugins: [sveltekit()],
  worker: { format: 'es' },
  // Sourcemaps only when asked (`BUILD_SOURCEMAP=1 npm run build`): `npm run bench:profile:worker`
  // and the bundle breakdown name source modules through them; the shipped site has none.
  build: { sourcemap: process.env.BUILD_SOURCEMAP === '1' },
  test: {
    include: ['src/**/*.spec.ts'],
    environment: 'node',
    // One fixed seed for every property test (scripts/fuzz.mjs explores others).
    // The parsers the worker loads on first use, loaded up front (src/parsers-setup.ts).
    setupFiles: ['src/fuzz-setup.ts', 'src/parsers-setup.ts'],
    testTimeout: 30_000
  }
});
