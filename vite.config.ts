import { sveltekit } from '@sveltejs/kit/vite';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  plugins: [sveltekit()],
  worker: { format: 'es' },
  test: {
    include: ['src/**/*.spec.ts'],
    environment: 'node',
    // One fixed seed for every property test (scripts/fuzz.mjs explores others).
    setupFiles: ['src/fuzz-setup.ts'],
    testTimeout: 30_000
  }
});
