import { defineConfig } from '@playwright/test';
import { findChromium, chromiumArgs } from './scripts/chromium.mjs';

const port = Number(process.env.E2E_PORT ?? 4179);
const executablePath = findChromium();

export default defineConfig({
  testDir: 'tests',
  testMatch: '**/*.test.ts',
  fullyParallel: true,
  workers: 2,
  retries: process.env.CI ? 1 : 0,
  timeout: 60_000,
  expect: { timeout: 15_000 },
  reporter: process.env.CI ? [['list']] : [['list']],
  use: {
    baseURL: `http://127.0.0.1:${port}/`,
    launchOptions: { executablePath, args: chromiumArgs },
    viewport: { width: 1440, height: 900 }
  },
  webServer: {
    command: `npm run --silent build && node scripts/serve.mjs`,
    url: `http://127.0.0.1:${port}/`,
    env: { PORT: String(port) },
    reuseExistingServer: !process.env.CI,
    timeout: 240_000
  }
});
