import { sveltekit } from '@sveltejs/kit/vite';
import { defineConfig } from 'vitest/config';

/**
 * What every page loads before anything of its own (issue #24, first load): the Svelte runtime
 * and SvelteKit's client router (with Vite's preload helper), in one file instead of two and a few crumbs. Files are gzipped
 * one by one, so each split costs its own header and loses the words the others share (measured:
 * ~1.6 KB on the playground's first load). Only what some page imports statically (`$initial`):
 * what a lazy part alone uses stays with it.
 */
const framework = {
  name: 'framework',
  test: /node_modules[\\/](svelte|@sveltejs[\\/]kit|clsx|esm-env)[\\/]|^\0vite[\\/]preload-helper/,
  tags: ['$initial' as const]
};

export default defineConfig(({ isSsrBuild }) => ({
  plugins: [sveltekit()],
  worker: {
    format: 'es',
    // The sim worker's first load in one file: what its entry imports statically, together with
    // the modules it shares with the parts it loads later (play, the parsers) — those import
    // them from the entry (~0.6 KB less than a separate shared chunk, gzipped).
    rolldownOptions: {
      output: { codeSplitting: { groups: [{ name: 'core', tags: ['$initial'] }] } }
    }
  },
  // Sourcemaps only when asked (`BUILD_SOURCEMAP=1 npm run build`): `npm run bench:profile:worker`
  // and the bundle breakdown name source modules through them; the shipped site has none.
  build: {
    sourcemap: process.env.BUILD_SOURCEMAP === '1',
    rolldownOptions: isSsrBuild ? {} : { output: { codeSplitting: { groups: [framework] } } }
  },
  test: {
    include: ['src/**/*.spec.ts'],
    environment: 'node',
    // One fixed seed for every property test (scripts/fuzz.mjs explores others).
    // The parsers the worker loads on first use, loaded up front (src/parsers-setup.ts).
    setupFiles: ['src/fuzz-setup.ts', 'src/parsers-setup.ts', 'src/checkpoint-setup.ts'],
    testTimeout: 30_000
  }
}));
