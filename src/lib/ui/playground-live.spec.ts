/**
 * Live play as the page sees it (issue #9): the worker plays on its own and posts snapshots; the
 * page shows the newest at a frame (older ones dropped unseen), acknowledges it so the worker may
 * post the next, lets the heavier panels follow in turns, and at a pause shows one snapshot
 * everywhere. The session is the real one, in process; frames are run by hand.
 */
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Snapshot, WorkerReply, WorkerRequest } from '$lib/sim/session/protocol';
import { Session } from '$lib/sim/session/session';
import { AUDIT_MS, PANEL_MS, Playground, SHOW_MS } from './playground.svelte';
import { SimClient } from './worker/client';
import { isLiveCommand, type LiveRequest } from './worker/live';

const scenario = JSON.parse(readFileSync('static/scenarios/reconnect-bypass.json', 'utf8'));

/** A worker in process: the session's commands answered; live play driven by the test. */
function fakeWorker() {
  const session = new Session();
  const live: LiveRequest[] = [];
  const w = {
    onmessage: null as ((e: MessageEvent<WorkerReply>) => void) | null,
    reply(re: number | null, reply: WorkerReply['reply']) {
      w.onmessage?.({ data: { re, reply } } as MessageEvent<WorkerReply>);
    },
    postMessage(req: WorkerRequest | LiveRequest) {
      if (isLiveCommand(req.cmd)) {
        live.push(req as LiveRequest);
        // A pause is answered with where the run stopped, as the browser worker does.
        if (req.cmd.type === 'liveStop') setTimeout(() => w.reply(req.id, session.snapshot()));
        return;
      }
      const { id, cmd } = req as WorkerRequest;
      setTimeout(() => {
        for (const r of session.handle(cmd)) w.reply(id, r);
      });
    },
    terminate() {}
  };
  /** The worker's next live batch: `ms` more of the run, posted as play's news. */
  const batch = (ms: number): Snapshot => {
    const re = live.find((l) => l.cmd.type === 'live')!.id;
    const snap = session.handle({ type: 'advance', to: session.sim!.now + ms })[0] as Snapshot;
    w.reply(re, snap);
    return snap;
  };
  return { worker: w, session, live, batch };
}

let frames: FrameRequestCallback[] = [];
/** Run the next animation frame at wall time `t`. */
const frame = (t: number) => {
  const due = frames;
  frames = [];
  for (const cb of due) cb(t);
};

beforeEach(() => {
  frames = [];
  vi.stubGlobal('requestAnimationFrame', (cb: FrameRequestCallback) => frames.push(cb));
  vi.stubGlobal('cancelAnimationFrame', () => (frames = []));
});
afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

async function loaded() {
  const f = fakeWorker();
  vi.spyOn(SimClient, 'start').mockImplementation(
    async () => new SimClient(f.worker as unknown as Worker)
  );
  const pg = new Playground();
  await pg.start();
  expect(await pg.load(scenario)).toEqual([]);
  return { pg, ...f };
}

describe('live play on the page', () => {
  it('shows the newest snapshot at a frame, drops the older ones unseen, and acknowledges it', async () => {
    const { pg, live, batch } = await loaded();
    pg.speed = 500;
    pg.play();
    expect(live.map((l) => l.cmd)).toEqual([{ type: 'live', speed: 500 }]);
    batch(10_000);
    const newest = batch(10_000);
    // Nothing is shown between frames.
    expect(pg.snapshot?.now).not.toBe(newest.now);
    frame(1_000);
    expect(pg.snapshot).toBe(newest);
    expect(live.filter((l) => l.cmd.type === 'liveAck')).toHaveLength(1);
    // A new speed goes to the play in progress.
    pg.speed = 1000;
    expect(live.at(-1)?.cmd).toEqual({ type: 'liveSpeed', speed: 1000 });
    pg.pause();
  });

  it('the heavier panels follow in turns while playing, one a frame; a pause shows one snapshot everywhere', async () => {
    const { pg, live, batch, session } = await loaded();
    pg.play();
    const first = batch(60_000);
    frame(1_000);
    // The charts follow first (the audit view was applied at load), the statechart a frame later.
    expect(pg.snapshot).toBe(first);
    frame(1_000 + SHOW_MS);
    expect(pg.chartSnapshot).toBe(first);
    expect(pg.panelSnapshot).not.toBe(first);
    frame(1_000 + 2 * SHOW_MS);
    expect(pg.panelSnapshot).toBe(first);
    // Within PANEL_MS of their last turn, the panels keep what they show.
    const second = batch(60_000);
    frame(1_000 + 3 * SHOW_MS);
    expect(pg.snapshot).toBe(second);
    frame(1_000 + 4 * SHOW_MS);
    expect(pg.chartSnapshot).toBe(first);
    frame(1_000 + Math.max(PANEL_MS, AUDIT_MS) + 4 * SHOW_MS);
    expect(pg.chartSnapshot).toBe(second);

    pg.pause();
    expect(live.at(-1)?.cmd).toEqual({ type: 'liveStop' });
    await vi.waitFor(() => expect(pg.snapshot?.now).toBe(session.sim!.now));
    // Play's news after the pause is stale: not shown.
    const stale = batch(60_000);
    expect(pg.snapshot).not.toBe(stale);
    expect(pg.panelSnapshot).toBe(pg.snapshot);
    expect(pg.chartSnapshot).toBe(pg.snapshot);
    expect(pg.playing).toBe(false);
  });

  it('the run’s end stops play, and everything shows the end', async () => {
    const { pg, batch } = await loaded();
    pg.speed = 1000;
    pg.play();
    const end = batch(10 * 24 * 3_600_000);
    expect(end.done).toBe(true);
    frame(500);
    expect(pg.playing).toBe(false);
    expect(pg.snapshot).toBe(end);
    expect(pg.panelSnapshot).toBe(end);
    expect(pg.chartSnapshot).toBe(end);
  });
});
