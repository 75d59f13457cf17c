/**
 * Client restarts in the playground's state (issue #10), against the real session in process: the
 * Restart client notice, a reload that resumes the run where it was (the tab's sessionStorage and
 * the run's namespace outlive the page, as in a browser), and "Simulate N h" past the end.
 */
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Command, WorkerReply, WorkerRequest } from '$lib/sim/session/protocol';
import { SharedDecisionStore } from '$lib/store/shared-store';
import { Simulation } from '$lib/sim/engine/engine';
import { LANE_IDS, parseScenario, type LaneId } from '$lib/sim/input/scenario';
import { Session, type RunStorage } from '$lib/sim/session/session';
import { PlaygroundPage, type PageHost } from './playground-page.svelte';
import { Playground } from './playground.svelte';
import { RUN_KEY } from './run-memory';
import { SimClient } from './worker/client';

const text = readFileSync('static/scenarios/reconnect-bypass.json', 'utf8');
const MIN = 60_000;

/** A durable store that says what is "on disk", like the browser's. */
class DiskStore extends SharedDecisionStore {
  status() {
    return { saved: this.count(), heldInMemory: 0, failure: null };
  }
}

/** The browser's side that outlives a page: the run's namespace and the tab's sessionStorage. */
function browser() {
  const stores: Record<LaneId, DiskStore> = { A: new DiskStore(), B: new DiskStore() };
  const storage: RunStorage = {
    run: 'r-unit',
    durable: (lane) => stores[lane],
    durableError: null,
    audit: null,
    auditError: null
  };
  const kv = new Map<string, string>();
  const sessionStorage = {
    getItem: (k: string) => kv.get(k) ?? null,
    setItem: (k: string, v: string) => void kv.set(k, v),
    removeItem: (k: string) => void kv.delete(k)
  };
  return { stores, storage, kv, sessionStorage };
}

/** A worker in process: each command to a `Session`, fast-forwards run to their end. */
function fakeWorker(session: Session) {
  const w = {
    onmessage: null as ((e: MessageEvent<WorkerReply>) => void) | null,
    emit(cmd: Command, re: number | null) {
      for (const reply of session.handle(cmd))
        w.onmessage?.({ data: { re, reply } } as MessageEvent<WorkerReply>);
      while (session.fastForwarding)
        for (const reply of session.fastForwardSlice(50_000))
          w.onmessage?.({ data: { re, reply } } as MessageEvent<WorkerReply>);
    },
    postMessage({ id, cmd }: WorkerRequest) {
      setTimeout(() => w.emit(cmd, id));
    },
    terminate() {}
  };
  return w;
}

const host: PageHost = {
  fetchScenario: () =>
    Promise.resolve({ ok: true, status: 200, json: () => Promise.resolve(JSON.parse(text)) }),
  location: () => ({ pathname: '/', search: '', hash: '' }),
  replaceUrl: () => {}
};

/** A page on `b`: mounted, its first snapshot in. `worker.emit` drives the run as Play would. */
async function openPage(b: ReturnType<typeof browser>) {
  const session = new Session({ storage: b.storage });
  const worker = fakeWorker(session);
  vi.spyOn(SimClient, 'start').mockImplementation(
    async () => new SimClient(worker as unknown as Worker)
  );
  const page = new PlaygroundPage(new Playground(), host);
  await page.mount();
  await vi.waitFor(() => expect(page.pg.snapshot).not.toBeNull());
  return { pg: page.pg, worker, session };
}

beforeEach(() => {
  vi.stubGlobal('requestAnimationFrame', () => 0);
  vi.stubGlobal('cancelAnimationFrame', () => {});
});
afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

function cliCounters(restartAt: number[]) {
  const parsed = parseScenario(JSON.parse(text));
  if (!parsed.ok) throw new Error('bad scenario');
  const sim = new Simulation(parsed.scenario, { restartAt });
  sim.runToEnd();
  return sim;
}

describe('client restarts in the playground', () => {
  it('Restart client: the notice says what each lane lost and kept, and the tab remembers it', async () => {
    const b = browser();
    vi.stubGlobal('sessionStorage', b.sessionStorage);
    const { pg, worker } = await openPage(b);
    const t = pg.snapshot!.start + 20 * MIN + 7;
    worker.emit({ type: 'advance', to: t }, null);
    const storedA = pg.snapshot!.lanes.A.storedDecisions;
    expect(storedA).toBeGreaterThan(0);
    await pg.restartClient();
    expect(pg.restarted!.report.t).toBe(t);
    expect(pg.restarted!.notice).toMatch(
      new RegExp(`^Client restarted: lane A lost ${storedA} stored decisions?, lane B kept \\d+`)
    );
    await vi.waitFor(() => expect(pg.snapshot!.lanes.A.storedDecisions).toBe(0));
    await vi.waitFor(() =>
      expect(JSON.parse(b.kv.get(RUN_KEY)!)).toMatchObject({
        id: 'r-unit',
        t,
        actions: [{ kind: 'restart', t }]
      })
    );
    pg.stop();
  });

  it('a reload resumes at the same virtual time, restarts the client there, and goes on as --restart-at', async () => {
    const b = browser();
    vi.stubGlobal('sessionStorage', b.sessionStorage);
    const first = await openPage(b);
    const start = first.pg.snapshot!.start;
    const t = start + 25 * MIN + 137;
    first.worker.emit({ type: 'advance', to: t }, null);
    const storedA = first.pg.snapshot!.lanes.A.storedDecisions;
    const storedB = first.pg.snapshot!.lanes.B.storedDecisions;
    first.pg.stop();

    const again = await openPage(b);
    const pg = again.pg;
    await vi.waitFor(() => expect(pg.restarted).not.toBeNull());
    expect(pg.snapshot!.now).toBe(t);
    expect(pg.restarted!.notice).toBe(
      `Client restarted: lane A lost ${storedA} stored decisions, lane B kept ${storedB} stored decisions`
    );
    expect(pg.snapshot!.lanes.A.storedDecisions).toBe(0);
    expect(pg.snapshot!.lanes.B.storedDecisions).toBe(storedB);
    expect(pg.resumed).toEqual({ A: 0, B: b.stores.B.count() });
    again.worker.emit({ type: 'advance', to: pg.snapshot!.end }, null);
    const cli = cliCounters([t - start]);
    for (const id of LANE_IDS)
      expect(pg.snapshot!.lanes[id].counters).toEqual(cli.lanes[id].metrics.counters);
    pg.stop();
  });

  it('a reload keeps the seed and the lane edits made mid-run (re-applied where they were)', async () => {
    const b = browser();
    vi.stubGlobal('sessionStorage', b.sessionStorage);
    const first = await openPage(b);
    await first.pg.setSeed(99);
    const start = first.pg.snapshot!.start;
    first.worker.emit({ type: 'advance', to: start + 10 * MIN }, null);
    first.pg.setClient('B', { store: 'connection' }, 'lane B: store connection');
    await vi.waitFor(() => expect(JSON.parse(b.kv.get(RUN_KEY)!).actions).toHaveLength(1));
    first.worker.emit({ type: 'advance', to: start + 20 * MIN }, null);
    const before = first.pg.snapshot!;
    first.pg.stop();

    const { pg } = await openPage(b);
    await vi.waitFor(() => expect(pg.restarted).not.toBeNull());
    expect(pg.seed).toBe(99);
    expect(pg.snapshot!.now).toBe(start + 20 * MIN);
    expect(pg.laneClient('B')).toEqual({ store: 'connection' });
    expect(pg.snapshot!.lanes.B.scope).toBe('connection');
    expect(pg.restarted!.notice).toMatch(
      new RegExp(
        `^Client restarted: lane A lost ${before.lanes.A.storedDecisions} stored decisions?, lane B lost ${before.lanes.B.storedDecisions} stored decisions?`
      )
    );
    pg.stop();
  });

  it('a run that ended resumes at its end on a reload: a client restart there, lane B’s numbers as they were, Simulate has nothing left', async () => {
    const b = browser();
    vi.stubGlobal('sessionStorage', b.sessionStorage);
    const first = await openPage(b);
    const end = first.pg.snapshot!.end;
    first.worker.emit({ type: 'advance', to: end }, null);
    const was = first.pg.snapshot!;
    expect(JSON.parse(b.kv.get(RUN_KEY)!)).toMatchObject({ t: end });
    first.pg.stop();

    const again = await openPage(b);
    const pg = again.pg;
    await vi.waitFor(() => expect(pg.restarted).not.toBeNull());
    expect(pg.snapshot!.now).toBe(end);
    expect(pg.snapshot!.done).toBe(true);
    expect(pg.restarted!.report.t).toBe(end);
    // The durable lane's figures are those the run ended with: nothing re-run over its decisions.
    expect(pg.snapshot!.lanes.B.counters).toEqual(was.lanes.B.counters);
    expect(pg.snapshot!.lanes.B.storedDecisions).toBe(was.lanes.B.storedDecisions);
    // The restart at the end is `lab run --restart-at 1h`, lane A's request in flight cancelled.
    const cli = cliCounters([end - pg.snapshot!.start]);
    for (const id of LANE_IDS)
      expect(pg.snapshot!.lanes[id].counters).toEqual(cli.lanes[id].metrics.counters);
    expect(pg.snapshot!.guarantees.filter((g) => g.status === 'broken')).toEqual([]);
    // Simulate 1 h again: the scenario has ended, the numbers stay.
    pg.fastForward(1);
    await vi.waitFor(() => expect(pg.ff).toBeNull());
    expect(pg.snapshot!.lanes.B.counters).toEqual(was.lanes.B.counters);
    pg.stop();
  });

  it('a forked run that ended is still the fork after a reload at its end', async () => {
    const b = browser();
    vi.stubGlobal('sessionStorage', b.sessionStorage);
    const first = await openPage(b);
    const start = first.pg.snapshot!.start;
    const end = first.pg.snapshot!.end;
    const fork = {
      version: 1,
      atMs: 10 * MIN,
      lane: 'A',
      change: { kind: 'config', client: { store: 'durable' } }
    } as const;
    await first.pg.travelRequest({ type: 'fork', fork }, (r) => r.type === 'snapshot');
    await vi.waitFor(() =>
      expect(JSON.parse(b.kv.get(RUN_KEY)!)).toMatchObject({ fork: { spec: fork } })
    );
    first.worker.emit({ type: 'advance', to: end }, null);
    const was = first.pg.snapshot!;
    expect(was.marks.some((m) => m.kind === 'fork')).toBe(true);
    expect(JSON.parse(b.kv.get(RUN_KEY)!)).toMatchObject({ t: end });
    first.pg.stop();

    const again = await openPage(b);
    const pg = again.pg;
    await vi.waitFor(() => expect(pg.restarted).not.toBeNull());
    expect(pg.snapshot!.now).toBe(end);
    expect(pg.snapshot!.marks.filter((m) => m.kind === 'fork')).toHaveLength(1);
    expect(pg.snapshot!.lanes.A.scope).toBe('durable');
    expect(pg.snapshot!.lanes.B.counters).toEqual(was.lanes.B.counters);
    expect(start).toBeLessThan(end);
    pg.stop();
  });

  it('a reload at the end keeps an edit the run met again after a seek back', async () => {
    const b = browser();
    vi.stubGlobal('sessionStorage', b.sessionStorage);
    const first = await openPage(b);
    const start = first.pg.snapshot!.start;
    const end = first.pg.snapshot!.end;
    first.worker.emit({ type: 'advance', to: start + 3 * MIN }, null);
    first.pg.setClient('A', { store: 'durable' }, 'lane A: store durable');
    await vi.waitFor(() => expect(JSON.parse(b.kv.get(RUN_KEY)!).actions).toHaveLength(1));
    first.worker.emit({ type: 'advance', to: start + 10 * MIN }, null);
    // Back before the edit, then on to the end: the run meets the edit again where it was.
    await first.pg.travelRequest({ type: 'seek', t: start + MIN }, (r) => r.type === 'snapshot');
    // The timeline as the seek left it: the edit is ahead of the run, not behind it.
    await vi.waitFor(() =>
      expect(first.pg.timeline).toMatchObject({ t: start + MIN, actions: [], ahead: [{}] })
    );
    first.worker.emit({ type: 'advance', to: end }, null);
    const was = first.pg.snapshot!;
    expect(was.marks.filter((m) => m.what === 'lane A: store durable')).toHaveLength(1);
    first.pg.stop();

    const { pg } = await openPage(b);
    await vi.waitFor(() => expect(pg.restarted).not.toBeNull());
    expect(pg.snapshot!.now).toBe(end);
    expect(pg.snapshot!.marks.filter((m) => m.what === 'lane A: store durable')).toHaveLength(1);
    expect(pg.snapshot!.lanes.A.scope).toBe('durable');
    expect(pg.snapshot!.lanes.B.counters).toEqual(was.lanes.B.counters);
    pg.stop();
  });

  it('Simulate past the end says where the scenario ends; Extend runs the rest', async () => {
    const b = browser();
    vi.stubGlobal('sessionStorage', b.sessionStorage);
    const { pg } = await openPage(b);
    pg.fastForward(2);
    await vi.waitFor(() => expect(pg.ff).toBeNull());
    expect(pg.clamped!.message).toBe(
      'The scenario ends at 1 h: simulating 1 h of the 2 h asked. Extend the run to 2 h to simulate all of it.'
    );
    expect(pg.snapshot!.now).toBe(pg.snapshot!.start + 60 * MIN);
    expect(await pg.extendRun()).toBeNull();
    expect(pg.clamped).toBeNull();
    await vi.waitFor(() => expect(pg.snapshot!.now).toBe(pg.snapshot!.start + 120 * MIN));
    expect(pg.snapshot!.done).toBe(true);
    pg.stop();
  });
});
