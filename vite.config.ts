import { sveltekit } from '@sveltejs/kit/vite';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  plugins: [sveltekit()],
  worker: { format: 'es' },
  test: {
    include: ['src/**/*.spec.ts'],
    environment: 'node',
    testTimeout: 30_000
  }
});
