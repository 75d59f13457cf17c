/**
 * Trace mode in the link (issue #22): the ready-made logs the page offers are the files in
 * static/traces/logs/ and each imports; a link names a ready-made log and carries a small dropped
 * one, and says why it cannot carry a large one; the page opens each kind of link in trace mode
 * (against the real session, in process, as playground-page.spec.ts does).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { WorkerReply, WorkerRequest } from '$lib/sim/session/protocol';
import { importTexts } from '$lib/sim/import';
import { Session } from '$lib/sim/session/session';
import { PlaygroundPage, type PageHost } from '../playground-page.svelte';
import { Playground } from '../playground.svelte';
import { decodeScenarioHash, decodeTraceHash, encodeScenarioHash } from '../share';
import { SimClient } from '../worker/client';
import { isLiveCommand, type LiveRequest } from '../worker/live';
import { READY_LOGS } from './trace-link';
import { parseTraceRef } from './trace-ref';
import { MAX_TRACE_LINK_CHARS, traceLinkOf } from './trace-link-size';

const LOGS = 'static/traces/logs/';
const logText = (f: string) => readFileSync(LOGS + f, 'utf8');

function fakeWorker(): Worker {
  const session = new Session();
  const w = {
    onmessage: null as ((e: MessageEvent<WorkerReply>) => void) | null,
    postMessage({ id, cmd }: WorkerRequest | LiveRequest) {
      if (isLiveCommand(cmd)) return;
      setTimeout(() => {
        for (const reply of session.handle(cmd))
          w.onmessage?.({ data: { re: id, reply } } as MessageEvent<WorkerReply>);
      });
    },
    terminate() {}
  };
  return w as unknown as Worker;
}

function host(url: { search?: string; hash?: string } = {}) {
  const urls: string[] = [];
  const loc = { pathname: '/', search: url.search ?? '', hash: url.hash ?? '' };
  const h: PageHost = {
    fetchScenario: (name) => {
      const data = JSON.parse(readFileSync(`static/scenarios/${name}.json`, 'utf8')) as unknown;
      return Promise.resolve({ ok: true, status: 200, json: () => Promise.resolve(data) });
    },
    location: () => loc,
    replaceUrl: (u) => {
      urls.push(u);
      const m = /^([^?#]*)(\?[^#]*)?(#.*)?$/.exec(u)!;
      loc.pathname = m[1]!;
      loc.search = m[2] ?? '';
      loc.hash = m[3] ?? '';
    },
    fetchLog: (file) => {
      try {
        const text = logText(file);
        return Promise.resolve({ ok: true, status: 200, text: () => Promise.resolve(text) });
      } catch {
        return Promise.resolve({ ok: false, status: 404, text: () => Promise.resolve('') });
      }
    }
  };
  return { h, urls, loc };
}

async function mounted(url: { search?: string; hash?: string } = {}) {
  const x = host(url);
  const page = new PlaygroundPage(new Playground(), x.h);
  await page.mount();
  await vi.waitFor(() => expect(page.pg.snapshot).not.toBeNull());
  return { page, ...x };
}

beforeAll(() => {
  vi.stubGlobal('requestAnimationFrame', () => 0);
  vi.stubGlobal('cancelAnimationFrame', () => {});
  vi.spyOn(SimClient, 'start').mockImplementation(async () => new SimClient(fakeWorker()));
});

describe('the ready-made logs', () => {
  it('are the client logs in static/traces/logs/, and each imports', () => {
    const files = new Set(READY_LOGS.flatMap((l) => l.files));
    // handler-policy.json is the policy the audit log was written with, not a log.
    const onDisk = readdirSync(LOGS).filter((f) => f !== 'handler-policy.json');
    expect([...files].sort()).toEqual(onDisk.sort());
    for (const l of READY_LOGS) {
      const r = importTexts(l.files.map((f) => [f, logText(f)]));
      expect(r.ok, l.name).toBe(true);
      if (r.ok) expect(r.report.sampling, l.name).toBeGreaterThan(0);
    }
  });
});

describe('a client log in a link', () => {
  it('names a ready-made log, carries a small dropped one, and says why not a large one', () => {
    expect(traceLinkOf({ ready: 'claude-weather' })).toEqual({
      value: { ready: 'claude-weather' },
      words: ''
    });
    const small = { files: [{ name: 'mcp.log', text: logText('mcp.log') }] };
    expect(traceLinkOf(small)).toEqual({ value: small, words: '' });
    // Random digits do not compress: 200 KB of them cannot fit in 32,000 link characters.
    let seed = 7;
    const noise = Array.from({ length: 200 * 1024 }, () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return String(seed % 10);
    }).join('');
    const large = traceLinkOf({ files: [{ name: 'big.log', text: noise }] });
    expect(large).toEqual({
      value: null,
      words: 'This page’s link cannot carry your log (200 KB): share the file with the link.'
    });
    expect(MAX_TRACE_LINK_CHARS).toBe(32_000);
  });

  it('round-trips through the share link, and refuses what is not a log reference', () => {
    const ref = { files: [{ name: 'a "b".log', text: 'x\n' }] };
    const hash = encodeScenarioHash({ title: 'x' }, null, null, ref);
    expect(decodeScenarioHash(hash)).toEqual({ ok: true, data: { title: 'x' } });
    const t = decodeTraceHash(hash);
    expect(t.ok && parseTraceRef(t.trace)).toEqual({ ok: true, ref });
    expect(decodeTraceHash(encodeScenarioHash({}))).toEqual({ ok: true, trace: null });
    expect(parseTraceRef({ ready: 'nope' })).toEqual({
      ok: false,
      error: 'the link names a ready-made log this page does not have'
    });
    expect(parseTraceRef({ files: [{ name: 1, text: '' }] })).toEqual({
      ok: false,
      error: 'the client log in the link: files[0] is not a named text'
    });
    expect(parseTraceRef([])).toEqual({
      ok: false,
      error: 'the client log in the link is not an object'
    });
  });
});

describe('the page in trace mode', () => {
  it('?trace=NAME opens the ready-made log against ?scenario=, in trace mode', async () => {
    const { page, urls } = await mounted({
      search: '?scenario=retryable-loop&trace=claude-weather'
    });
    await vi.waitFor(() => expect(page.logs.active).toBe(true));
    expect(page.logs.imported!.name).toBe('mcp-server-weather.log');
    expect(page.pg.name).toBe('retryable-loop');
    expect(page.loadError).toBe('');
    expect(urls.at(-1)).toBe('/?scenario=retryable-loop&trace=claude-weather');
  });

  it('a dropped small log goes into the address with its scenario; a reload of it replays it', async () => {
    const { page, loc } = await mounted();
    const text = logText('mcp-server-weather.log');
    expect(await page.logs.importFiles([{ name: 'mcp-server-weather.log', text }])).toBeNull();
    expect(loc.search).toBe('');
    expect(loc.hash).toMatch(/^#s=[^&]+&t=/);
    const again = await mounted({ search: loc.search, hash: loc.hash });
    await vi.waitFor(() => expect(again.page.logs.active).toBe(true));
    expect(again.page.logs.imported!.name).toBe('mcp-server-weather.log');
    // The what-if is worked out after the replay loads.
    const whatIf = (p: PlaygroundPage) => p.logs.imported?.whatIf ?? null;
    await vi.waitFor(() => expect(whatIf(page)).not.toBeNull(), { timeout: 30_000 });
    await vi.waitFor(() => expect(whatIf(again.page)).toEqual(whatIf(page)), { timeout: 30_000 });
    expect(again.page.pg.scenario).toEqual(page.pg.scenario);

    // Another scenario uploaded: trace mode ends, and the address no longer names the log.
    await again.page.loadData(JSON.parse(readFileSync('static/scenarios/tired-user.json', 'utf8')));
    expect(again.loc.hash).not.toContain('&t=');
  });

  it('a link whose log cannot be read opens its scenario and says why', async () => {
    const data = JSON.parse(readFileSync('static/scenarios/tired-user.json', 'utf8')) as object;
    const { page } = await mounted({ hash: encodeScenarioHash(data, null, null, { ready: 'x' }) });
    await vi.waitFor(() =>
      expect(page.loadError).toBe(
        'The client log in the link could not be opened: the link names a ready-made log this page does not have. The scenario is shown without it.'
      )
    );
    expect(page.pg.name).toBe('tired-user');
    expect(page.logs.active).toBe(false);
    const bad = await mounted({ search: '?trace=nope' });
    expect(bad.page.loadError).toBe(
      'The client log in the link could not be opened: the link names a ready-made log this page does not have. The scenario is shown without it.'
    );
  });
});
