/**
 * The sweep runner's Cancel: it stops a run under way, and a run about to start (the page makes
 * the runner, then waits for the worker module: a Cancel in that wait must hold too).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseSweep, planSweep } from '../../sim/sweep';
import { Cancelled, SweepRunner, type WorkerLike } from './runner';
import type { SweepWorkerIn } from './protocol';

function plan() {
  const s = parseSweep({
    version: 1,
    scenario: 'x.json',
    grid: { 'lanes.A.client.store': ['connection', 'durable'] },
    seeds: [11, 12],
    objectives: { 'A.consentPrompts': 'min' }
  });
  if (!s.ok) throw new Error(JSON.stringify(s.errors));
  const p = planSweep(s.sweep, readFileSync('static/scenarios/reconnect-bypass.json', 'utf8'));
  if (!p.ok) throw new Error(JSON.stringify(p.errors));
  return p.plan;
}

/** A worker that records what it is sent and answers nothing until told. */
class FakeWorker implements WorkerLike {
  sent: SweepWorkerIn[] = [];
  terminated = false;
  onmessage: WorkerLike['onmessage'] = null;
  onerror: WorkerLike['onerror'] = null;
  postMessage(m: SweepWorkerIn): void {
    this.sent.push(m);
  }
  terminate(): void {
    this.terminated = true;
  }
}

/** Start `runner` on two fake workers: the run, and the workers it made. */
function start(runner: SweepRunner): { run: Promise<unknown>; made: FakeWorker[] } {
  const made: FakeWorker[] = [];
  const make = () => {
    const w = new FakeWorker();
    made.push(w);
    return w;
  };
  return { run: runner.run(plan(), '{}', 2, make, () => {}), made };
}

describe('SweepRunner', () => {
  it('a Cancel before the run starts stops it: no worker is made, the run is cancelled', async () => {
    const runner = new SweepRunner();
    runner.cancel();
    const { run, made } = start(runner);
    await expect(run).rejects.toBeInstanceOf(Cancelled);
    expect(made).toEqual([]);
  });

  it('a Cancel during the run terminates every worker and rejects', async () => {
    const runner = new SweepRunner();
    const { run, made } = start(runner);
    expect(made).toHaveLength(2);
    expect(made.every((w) => w.sent[0]?.type === 'init')).toBe(true);
    runner.cancel();
    await expect(run).rejects.toBeInstanceOf(Cancelled);
    expect(made.every((w) => w.terminated)).toBe(true);
  });
});
