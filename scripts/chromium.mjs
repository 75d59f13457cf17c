// Finds a Chromium for Playwright: CHROMIUM_PATH, then Debian's /usr/bin/chromium, then the
// other usual places. Returns undefined when none is found (Playwright's own download, if any).
import { existsSync } from 'node:fs';

const candidates = [
  process.env.CHROMIUM_PATH,
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable'
];

export function findChromium() {
  return candidates.find((p) => p && existsSync(p));
}

/** Flags that keep Chromium quiet on a machine with no network but the package registries. */
export const chromiumArgs = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run'
];
