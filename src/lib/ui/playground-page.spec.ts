/**
 * The playground page's state against the real session, in process (a fake worker hands each
 * command to a `Session`, as in lessons/lesson.spec.ts): loading from the URL, a shared link and
 * an upload, the seed field and the keyboard shortcuts.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { WorkerReply, WorkerRequest } from '$lib/sim/session/protocol';
import { Session } from '$lib/sim/session/session';
import {
  PlaygroundPage,
  auditWindowOf,
  liveCapOf,
  formatFigure,
  formatSimTime,
  ratio,
  type PageHost
} from './playground-page.svelte';
import { Playground } from './playground.svelte';
import { encodeScenarioHash } from './share';
import { SimClient } from './worker/client';
import { isLiveCommand, type LiveRequest } from './worker/live';

function fakeWorker(): Worker {
  const session = new Session();
  const w = {
    onmessage: null as ((e: MessageEvent<WorkerReply>) => void) | null,
    postMessage({ id, cmd }: WorkerRequest | LiveRequest) {
      // Live play is the browser worker's own (worker/live.ts): Play and Pause only flip state here.
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

const scenarioText = (name: string) => readFileSync(`static/scenarios/${name}.json`, 'utf8');

function host(url: { search?: string; hash?: string } = {}) {
  const fetched: string[] = [];
  const urls: string[] = [];
  const h: PageHost = {
    fetchScenario: (name) => {
      fetched.push(name);
      try {
        const data = JSON.parse(scenarioText(name)) as unknown;
        return Promise.resolve({ ok: true, status: 200, json: () => Promise.resolve(data) });
      } catch {
        return Promise.resolve({ ok: false, status: 404, json: () => Promise.resolve(null) });
      }
    },
    location: () => ({ pathname: '/', search: url.search ?? '', hash: url.hash ?? '' }),
    replaceUrl: (u) => urls.push(u)
  };
  return { h, fetched, urls };
}

async function mounted(url: { search?: string; hash?: string } = {}) {
  const x = host(url);
  const page = new PlaygroundPage(new Playground(), x.h);
  await page.mount();
  await vi.waitFor(() => expect(page.pg.snapshot).not.toBeNull());
  return { page, ...x };
}

const key = (k: string, over: Partial<Parameters<PlaygroundPage['key']>[0]> = {}) => ({
  key: k,
  target: null,
  metaKey: false,
  ctrlKey: false,
  altKey: false,
  ...over
});

beforeAll(() => {
  vi.stubGlobal('requestAnimationFrame', () => 0);
  vi.stubGlobal('cancelAnimationFrame', () => {});
  vi.spyOn(SimClient, 'start').mockImplementation(async () => new SimClient(fakeWorker()));
});

describe('the playground page state', () => {
  it('loads the default scenario when the URL names none, and shows its seed', async () => {
    const { page, fetched } = await mounted();
    expect(fetched).toEqual(['reconnect-bypass']);
    expect(page.picked).toBe('reconnect-bypass');
    expect(page.pg.name).toBe('reconnect-bypass');
    expect(page.seedText).toBe(String(page.pg.seed));
    expect(page.loadError).toBe('');
    page.pg.stop();
  });

  it('loads a ready-made scenario named in ?scenario=, and ignores a name it does not know', async () => {
    const a = await mounted({ search: '?scenario=tired-user' });
    expect(a.fetched).toEqual(['tired-user']);
    expect(a.page.pg.name).toBe('tired-user');
    a.page.pg.stop();
    const b = await mounted({ search: '?scenario=../../etc/passwd' });
    expect(b.fetched).toEqual(['reconnect-bypass']);
    b.page.pg.stop();
  });

  it('opens a shared link, and says why a broken one shows the default instead', async () => {
    const data = JSON.parse(scenarioText('retryable-loop')) as Record<string, unknown>;
    const ok = await mounted({ hash: encodeScenarioHash({ ...data, name: 'shared-one' }) });
    await vi.waitFor(() => expect(ok.page.pg.name).toBe('shared-one'));
    expect(ok.fetched).toEqual([]);
    expect(ok.page.picked).toBe('');
    ok.page.pg.stop();
    const bad = await mounted({ hash: '#s=%%%not-a-scenario' });
    expect(bad.page.pg.name).toBe('reconnect-bypass');
    expect(bad.page.loadError).toMatch(
      /^The shared link could not be opened: .+ The default scenario is shown instead\.$/
    );
    bad.page.pg.stop();
  });

  // Issue #19: a link whose tight loop retried every 0 ms passed, and crashed the tab.
  it('refuses a shared link or an upload whose behaviour parameter is out of bounds, with its path', async () => {
    const data = JSON.parse(scenarioText('budget-window')) as {
      servers: Record<string, unknown>[];
    };
    data.servers[1] = { ...data.servers[1], params: { intervalMs: 0 } };
    const link = await mounted({ hash: encodeScenarioHash(data) });
    expect(link.page.pg.name).toBe('reconnect-bypass');
    expect(link.page.loadError).toContain(
      '$.servers[1].params.intervalMs: must be at least 10 ms, got the number 0'
    );
    expect(await link.page.loadData(data)).toBe(
      'Scenario not loaded: $.servers[1].params.intervalMs: must be at least 10 ms, got the number 0'
    );
    link.page.pg.stop();
  });

  it('refuses an invalid upload with where and what, and keeps the running scenario', async () => {
    const { page } = await mounted();
    expect(await page.loadData([1, 2])).toBe('The file is not a scenario object.');
    const data = JSON.parse(scenarioText('tired-user')) as Record<string, unknown>;
    const msg = await page.loadData({ ...data, seed: -1 });
    expect(msg).toMatch(/^Scenario not loaded: \$\.seed: /);
    expect(page.pg.name).toBe('reconnect-bypass');
    expect(await page.loadTrace('not json')).toMatch(/^Trace not loaded: /);
    page.pg.stop();
  });

  it('a picked scenario is named in the URL; a missing one says so with its HTTP status', async () => {
    const { page, urls } = await mounted();
    await page.pick('tired-user');
    expect(urls).toEqual(['/?scenario=tired-user']);
    expect(page.pg.name).toBe('tired-user');
    await page.loadNamed('no-such-scenario');
    expect(page.loadError).toBe("Could not load scenario 'no-such-scenario' (HTTP 404).");
    page.pg.stop();
  });

  it('takes a valid seed and undoes anything else', async () => {
    const { page } = await mounted();
    const before = page.pg.seed;
    page.seedText = '-3';
    await page.commitSeed();
    expect(page.seedText).toBe(String(before));
    page.seedText = '12345';
    await page.commitSeed();
    await vi.waitFor(() => expect(page.pg.seed).toBe(12345));
    page.pg.stop();
  });

  it('undoes an emptied seed field and 0x10 as lab refuses them: neither runs with seed 0 or 16', async () => {
    const { page } = await mounted();
    const before = page.pg.seed;
    for (const typed of ['', '0x10', '1e3', '4294967296']) {
      page.seedText = typed;
      await page.commitSeed();
      expect(page.seedText, typed).toBe(String(before));
    }
    expect(page.pg.seed).toBe(before);
    page.pg.stop();
  });

  it('keyboard: Space plays and pauses, ? and Escape the dialog, +/- the speed; never in a field', async () => {
    const { page } = await mounted();
    expect(page.key(key(' '))).toBe(true);
    expect(page.pg.playing).toBe(true);
    page.key(key(' '));
    expect(page.pg.playing).toBe(false);
    const field = { closest: (s: string) => (s.includes('input') ? {} : null) };
    expect(page.key(key(' ', { target: field as unknown as EventTarget }))).toBe(false);
    expect(page.key(key(' ', { ctrlKey: true }))).toBe(false);
    expect(page.pg.playing).toBe(false);
    page.key(key('?'));
    expect(page.helpOpen).toBe(true);
    page.key(key('Escape'));
    expect(page.helpOpen).toBe(false);
    const speed = page.pg.speed;
    page.key(key('+'));
    expect(page.pg.speed).toBeGreaterThan(speed);
    page.key(key('-'));
    expect(page.pg.speed).toBe(speed);
    page.pg.stop();
  });
});

describe('the page formats', () => {
  it('virtual time, ratios, figures and the auditWindow knob', () => {
    expect(formatSimTime(0)).toBe('0:00:00');
    expect(formatSimTime(25 * 3_600_000 + 61_500)).toBe('25:01:01');
    // Before: NaN:NaN:NaN (a naive retrier's wait of 0 × 2^1024).
    expect(formatSimTime(NaN)).toBe('–:––:––');
    expect([ratio(3, 3), ratio(0, 4), ratio(7, 2), ratio(2, 30)]).toEqual([
      'same',
      '',
      '3.5×',
      '15×'
    ]);
    expect(formatFigure(1_234_567)).toBe('1,234,567');
    expect(formatFigure(1_500_000, true)).toMatch(/^\$1\.5/);
    expect([
      auditWindowOf('?auditWindow=500'),
      auditWindowOf('?auditWindow=-1'),
      auditWindowOf('')
    ]).toEqual([500, undefined, undefined]);
    expect(
      ['?liveCap=20', '?liveCap=0.5', '?liveCap=0', '?liveCap=x', '?liveCap=', ''].map(liveCapOf)
    ).toEqual([20, 0.5, undefined, undefined, undefined, undefined]);
  });
});
