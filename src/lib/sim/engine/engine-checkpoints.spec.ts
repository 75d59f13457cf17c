/**
 * Engine checkpoints held to a memory budget (issue #19: a simulated week crashed the tab, most
 * of its 2.7 GB in engine copies that grow with the run). The budget is on their estimated size
 * (engine-size.ts), not only their count: past it every other one goes, evenly, and a seek back
 * runs on from the nearest one left — to exactly the run a re-simulation gives.
 */
import { describe, expect, it } from 'vitest';
import { estimateCopyBytes } from './engine-size';
import { RunGuard } from '../checks/guard';
import { thinningWords } from '../report/long-run';
import type { Snapshot } from '../session/protocol';
import { only, readScenario as read } from '../session/replies.testing';
import { Session } from '../session/session';
import { parseScenario } from '../input/scenario';
import { Simulation } from './engine';

const HOUR = 3_600_000;

function loaded(s: Session, data: unknown) {
  const [l] = only(s.handle({ type: 'load', scenario: data }), 'loaded');
  if (!l?.ok) throw new Error('not loaded');
  return l;
}

/** A snapshot as the page shows it (how many events the last command ran aside), one key a line. */
const view = (rs: ReturnType<Session['handle']>) => {
  const [snap] = only(rs, 'snapshot');
  const { events: _events, ...shown } = snap as Snapshot;
  return Object.entries(shown).map(([k, v]) => `${k}: ${JSON.stringify(v).slice(0, 2000)}`);
};

describe('engine checkpoints within a memory budget', () => {
  it('a run keeps its checkpoints under the budget by thinning them evenly, and says so', () => {
    const data = read('reconnect-bypass');
    const free = new Session({ copyEvery: 200 });
    const l = loaded(free, data);
    free.handle({ type: 'seek', t: l.end });
    const all = free.engineCheckpoints;
    expect(all.thinning).toBeNull();
    expect(all.list.length).toBeGreaterThan(8);

    // A budget of a third of what they took unbounded.
    const budget = Math.floor(all.bytes / 3);
    const s = new Session({ copyEvery: 200, copyBudgetBytes: budget });
    loaded(s, data);
    s.handle({ type: 'seek', t: l.end });
    const cps = s.engineCheckpoints;
    expect(cps.bytes).toBeLessThanOrEqual(budget);
    expect(cps.list.length).toBeGreaterThan(1);
    expect(cps.list.length).toBeLessThan(all.list.length);
    // Each estimate is the one of its copy, and they add up.
    expect(cps.bytes).toBe(cps.list.reduce((n, c) => n + c.bytes, 0));
    const th = cps.thinning!;
    expect(th.kept).toBe(cps.list.length);
    expect(th.budgetBytes).toBe(budget);
    expect(th.from).toBe(cps.list[0]!.at.t);
    expect(th.to).toBe(cps.list.at(-1)!.at.t);
    expect(thinningWords(th, l.start)).toMatch(
      /^Long run: to keep memory bounded \(at most 48 engine copies, \d+ [KM]B\), the copies a seek back starts from are thinned to \d+, about one every .+; a seek back re-simulates up to .+ from the nearest one before it/
    );
  });

  it('seeks back after thinning give the run a re-simulation gives', () => {
    const data = read('reconnect-bypass');
    const probe = new Session({ copyEvery: 200 });
    const l = loaded(probe, data);
    probe.handle({ type: 'seek', t: l.end });
    const s = new Session({ copyEvery: 200, copyBudgetBytes: probe.engineCheckpoints.bytes / 4 });
    loaded(s, data);
    s.handle({ type: 'seek', t: l.end });
    // The same timeline, every seek back re-simulated from the start.
    const again = new Session({ copies: false });
    loaded(again, data);
    again.handle({ type: 'seek', t: l.end });
    for (const f of [0.8, 0.15, 0.55, 0.3]) {
      const t = Math.round(l.start + f * (l.end - l.start)) + 7;
      const a = view(s.handle({ type: 'seek', t }));
      expect(a).toEqual(view(again.handle({ type: 'seek', t })));
    }
    // From the thinned copies (a seek before the first one left re-simulates).
    expect(s.copyRestores).toBeGreaterThanOrEqual(2);
  });

  it('the estimate of a copy grows with what the run holds', () => {
    const parsed = parseScenario(JSON.stringify(read('reconnect-bypass')));
    if (!parsed.ok) throw new Error('bad scenario');
    const guard = new RunGuard(parsed.scenario);
    const sim = guard.attach(new Simulation(parsed.scenario, guard.options()));
    const at0 = estimateCopyBytes(sim, guard);
    sim.advanceTo(sim.start + HOUR / 2);
    const at30 = estimateCopyBytes(sim, guard);
    expect(at30).toBeGreaterThan(at0);
  });
});
