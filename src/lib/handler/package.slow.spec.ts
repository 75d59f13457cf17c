/**
 * SLOW (minutes: it runs `npm pack`, which builds the handler, and `npm install`; it spawns
 * processes). The package as a user gets it: the tarball holds the built handler and no page
 * code, installs into a fresh plain Node project beside the MCP SDK and server-everything (no
 * build tools there), and the README's example — taken from the README itself — runs there
 * against the real server over stdio, twice: the second run is a restarted client, and its
 * `fileStore` answers the refusal without asking.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = process.cwd();
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  version: string;
  devDependencies: Record<string, string>;
};

/** The README's runnable example: the js block after the `handler-example` marker. */
function readmeExample(): string {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const m = /<!-- handler-example: my-client\.mjs -->\s*```js\n([\s\S]*?)```/.exec(readme);
  if (!m) throw new Error('README.md: no js block after <!-- handler-example: my-client.mjs -->');
  return m[1]!;
}

function run(cmd: string, args: string[], cwd: string): string {
  return execFileSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 600_000
  });
}

/** Files and folders a page build pulls in; none belongs in the handler's package. */
const PAGE_CODE = /(\.svelte$|(^|\/)(routes|ui)\/|svelte|monaco|uplot|lz-string|idb-keyval)/;

describe('npm pack → a fresh Node project (SLOW: spawns npm and node)', () => {
  it(
    'the tarball installs with no build tools, holds no page code, and runs the README example twice',
    { timeout: 900_000 },
    () => {
      const out = mkdtempSync(join(tmpdir(), 'handler-pack-'));
      const packed = run('npm', ['pack', '--silent', '--pack-destination', out], root).trim();
      const tarball = join(out, packed.split('\n').pop()!);
      expect(tarball).toMatch(/sampling-policy-lab-.*\.tgz$/);

      const files = run('tar', ['-tzf', tarball], out).trim().split('\n').sort();
      expect(files).toEqual([
        'package/README.md',
        'package/dist/handler/index.d.ts',
        'package/dist/handler/index.js',
        'package/package.json'
      ]);
      const bundle = run('tar', ['-xzOf', tarball, 'package/dist/handler/index.js'], out);
      expect(bundle).not.toMatch(/from ['"](svelte|@sveltejs|monaco-editor|uplot|lz-string)/);

      const app = mkdtempSync(join(tmpdir(), 'handler-app-'));
      writeFileSync(
        join(app, 'package.json'),
        JSON.stringify({ name: 'my-client', private: true, type: 'module' })
      );
      run(
        'npm',
        [
          'install',
          '--prefer-offline',
          '--no-audit',
          '--no-fund',
          tarball,
          `@modelcontextprotocol/sdk@${pkg.devDependencies['@modelcontextprotocol/sdk']}`,
          `@modelcontextprotocol/server-everything@${pkg.devDependencies['@modelcontextprotocol/server-everything']}`
        ],
        app
      );
      // What the install pulled in: the handler's own dependencies, none of the page's.
      const installed = [
        ...readdirSync(join(app, 'node_modules')),
        ...readdirSync(join(app, 'node_modules/@modelcontextprotocol'))
      ];
      expect(installed.filter((n) => PAGE_CODE.test(n))).toEqual([]);
      expect(existsSync(join(app, 'node_modules/@sveltejs'))).toBe(false);
      for (const dep of ['zod', 'canonicalize'])
        expect(existsSync(join(app, 'node_modules', dep))).toBe(true);
      // A policy's hash and a request's identity use the lab's own one-shot SHA-256
      // (machine/sha256.ts, checked against node:crypto and noble), so no hashing library comes.
      expect(existsSync(join(app, 'node_modules/@noble'))).toBe(false);
      // The handler runs the flow's own transition table (machine/authorize/fast.ts), not an
      // XState actor, so installing it brings no XState.
      expect(existsSync(join(app, 'node_modules/xstate'))).toBe(false);

      writeFileSync(join(app, 'my-client.mjs'), readmeExample());
      const first = run(process.execPath, ['my-client.mjs'], app).trim().split('\n');
      expect(first).toEqual([
        'consent asked: everything, at most 0.000816 USD',
        'release notes: served',
        'consent asked: everything, at most 0.000816 USD',
        "the secret plan: MCP error -32003: Sampling denied by the user for server 'everything'",
        "the secret plan: MCP error -32003: Sampling denied by the user for server 'everything'"
      ]);
      // A restarted client: the file store answers both decisions without a dialog.
      const second = run(process.execPath, ['my-client.mjs'], app).trim().split('\n');
      expect(second).toEqual([
        'release notes: served',
        "the secret plan: MCP error -32003: Sampling denied by the user for server 'everything'",
        "the secret plan: MCP error -32003: Sampling denied by the user for server 'everything'"
      ]);
      const audit = readFileSync(join(app, 'sampling-audit.jsonl'), 'utf8').trim().split('\n');
      expect(audit.map((l) => (JSON.parse(l) as { outcome: string }).outcome)).toEqual([
        'allowed',
        'denied',
        'denied',
        'allowed',
        'denied',
        'denied'
      ]);
    }
  );
});
