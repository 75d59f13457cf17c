import adapter from '@sveltejs/adapter-static';
import { vitePreprocess } from '@sveltejs/vite-plugin-svelte';

/** A sub-path deployment (e.g. GitHub Pages under /repo) sets BASE_PATH=/repo at build time. */
const base = process.env.BASE_PATH ?? '';

/** @type {import('@sveltejs/kit').Config} */
const config = {
  preprocess: vitePreprocess(),
  // No `window.__svelte` version mark: a chunk of its own in every page's first load (issue #24).
  compilerOptions: { discloseVersion: false },
  kit: {
    adapter: adapter({ pages: 'build', assets: 'build', fallback: undefined, strict: true }),
    paths: { base, relative: true },
    prerender: { handleHttpError: 'fail' },
    /**
     * Content-Security-Policy. A static host sends no headers of ours, so SvelteKit writes it into
     * each prerendered page as `<meta http-equiv="content-security-policy">`, with a SHA-256 hash
     * for each inline script it emits (`mode: 'hash'`). A meta CSP cannot carry `frame-ancestors`
     * (nor `report-uri` or `sandbox`): clickjacking protection needs a header from the host.
     *
     * Everything comes from this origin: scripts, the simulation and Monaco workers (bundled with
     * Vite's `?worker`, so no `blob:`), fetches of the ready-made scenarios. Styles allow inline:
     * Monaco and uPlot inject `<style>` elements and style attributes at run time; styles cannot
     * run code. Images allow `data:` for Monaco's inline icons.
     */
    csp: {
      mode: 'hash',
      directives: {
        'default-src': ['self'],
        'script-src': ['self'],
        'style-src': ['self', 'unsafe-inline'],
        'img-src': ['self', 'data:'],
        'font-src': ['self', 'data:'],
        'connect-src': ['self'],
        'worker-src': ['self'],
        'child-src': ['self'],
        'frame-src': ['none'],
        'object-src': ['none'],
        'base-uri': ['self'],
        'form-action': ['self'],
        'manifest-src': ['self']
      }
    }
  }
};

export default config;
