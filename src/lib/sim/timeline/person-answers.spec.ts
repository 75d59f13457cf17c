/**
 * A person's answers ("you are the user") are timeline actions: re-simulating a run — a restore,
 * a seek back, a fork, a reload — answers the same dialogs the same way at the same place.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseTimeline } from './actions';
import { replayFrom, replayTo } from '../engine/checkpoint';
import { Simulation, type SimulationOptions, type TimelineAction } from '../engine/engine';
import { parseFork } from '../engine/fork';
import { forkRun } from '../engine/fork-run';
import type { Snapshot } from '../session/protocol';
import { auditLineJson, frameLineJson } from '../report/report';
import { parseScenario, type LaneId, type Scenario } from '../input/scenario';
import { Session } from '../session/session';
import { only, snap } from '../session/replies.testing';

const data = JSON.parse(readFileSync('static/scenarios/reconnect-bypass.json', 'utf8')) as Record<
  string,
  unknown
>;
const parsed = parseScenario(data);
if (!parsed.ok) throw new Error('bad scenario');
const scenario: Scenario = parsed.scenario;
const MIN = 60_000;

/** Every frame and audit line a run writes, as the CLI writes them. */
function lines() {
  const out: string[] = [];
  const opts: SimulationOptions = {
    human: ['A', 'B'],
    onFrame: (l) => void out.push(frameLineJson(l)),
    onAudit: (r) => void out.push(auditLineJson(r))
  };
  return { out, opts };
}

/**
 * A person at the page: every 7 virtual seconds, answers what is open — approving even request
 * ids, denying odd ones, leaving every fifth dialog to time out — and at 25 min hands lane A back
 * to the simulated user.
 */
function personRun(sim: Simulation, until = sim.end): void {
  let handed = false;
  while (sim.now < until) {
    sim.advanceTo(Math.min(until, sim.now + 7_000));
    for (const d of sim.consent.open) {
      const id = Number(d.input.requestId);
      if (id % 5 === 0) continue;
      sim.answerConsent(d.lane, d.input.connection, d.input.requestId, id % 2 === 0);
    }
    if (!handed && sim.now >= sim.start + 25 * MIN) {
      sim.setHuman(['B']);
      handed = true;
    }
  }
}

describe('a person’s consent answers on the timeline', () => {
  it('a run with person answers, restored by replay to t and continued, is the uninterrupted run byte for byte', () => {
    const straight = lines();
    const sim = new Simulation(scenario, straight.opts);
    personRun(sim);
    const answers = sim.actions.filter((a) => a.kind === 'consent');
    expect(answers.length).toBeGreaterThan(20);
    expect(answers.some((a) => a.kind === 'consent' && !a.approved)).toBe(true);
    // Who answers, from the start and from 25 min, is on the timeline too.
    expect(sim.actions.filter((a) => a.kind === 'human')).toEqual([
      { t: sim.start, events: 0, kind: 'human', lanes: ['A', 'B'] },
      expect.objectContaining({ lanes: ['B'] })
    ]);

    for (const t of [10 * MIN, 31 * MIN]) {
      const again = lines();
      const restored = replayTo(scenario, again.opts, sim.actions, { t: sim.start + t });
      expect(restored.now).toBe(sim.start + t);
      replayFrom(restored, sim.actions, sim.position);
      expect(again.out.join('\n')).toBe(straight.out.join('\n'));
      expect(restored.actions).toEqual(sim.actions);
    }

    // Without the answers the dialogs stay open: the run is another one, and the replay says so.
    const withoutAnswers = sim.actions.filter((a) => a.kind !== 'consent');
    expect(() => replayTo(scenario, lines().opts, withoutAnswers, sim.position)).toThrow(
      /re-simulation diverged/
    );
  });

  it('a replay that meets no such dialog says where it diverged', () => {
    const probe = new Simulation(scenario, { human: ['A'] });
    probe.advanceTo(scenario.start + 1_000);
    const bogus: TimelineAction = {
      ...probe.position,
      kind: 'consent',
      lane: 'A',
      connection: 'nobody#1',
      requestId: 1,
      approved: true
    };
    expect(() =>
      replayTo(scenario, { human: ['A'] }, [bogus], { t: scenario.start + 2_000 })
    ).toThrow(/no consent dialog open for lane A's request 1 on nobody#1/);
  });

  it('a fork keeps the other lane’s answers: lane B is byte for byte the unforked run', () => {
    const straight = lines();
    const sim = new Simulation(scenario, straight.opts);
    personRun(sim);
    const bOnly = (out: string[]) => out.filter((l) => l.includes('"lane":"B"'));
    const forked = lines();
    const lanes = scenario.lanes.A.client;
    const spec = parseFork({
      version: 1,
      atMs: 12 * MIN,
      lane: 'A',
      change: { kind: 'config', client: { ...lanes, store: 'durable' } }
    });
    if (!spec.ok) throw new Error(spec.errors[0]!.message);
    const f = forkRun(scenario, forked.opts, sim.actions, spec.fork);
    personRunAfterFork(f);
    expect(bOnly(forked.out).join('\n')).toBe(bOnly(straight.out).join('\n'));
  });
});

/** After a fork, the person goes on answering lane A's new dialogs (lane B's are on the timeline). */
function personRunAfterFork(sim: Simulation): void {
  while (sim.now < sim.end) {
    sim.advanceTo(Math.min(sim.end, sim.now + 7_000));
    for (const d of sim.consent.open)
      if (d.lane === 'A') sim.answerConsent('A', d.input.connection, d.input.requestId, true);
  }
}

/** A session in "you are the user" mode, answering every dialog open at `t` with `approved`. */
function answerAll(s: Session, t: number, approved: (lane: LaneId) => boolean): Snapshot {
  let view = snap(s.handle({ type: 'advance', to: t }));
  for (const p of view.pendingConsent)
    view = snap(
      s.handle({ type: 'consent', lane: p.lane, token: p.token, approved: approved(p.lane) })
    );
  return view;
}

function humanSession(): { s: Session; start: number; end: number } {
  const s = new Session();
  const [r] = s.handle({ type: 'load', scenario: data, human: ['A', 'B'] });
  if (r?.type !== 'loaded' || !r.ok) throw new Error('not loaded');
  return { s, start: r.start, end: r.end };
}

describe('the session: answers survive a seek back and a reload', () => {
  it('a seek back to before an answer and forward again answers the dialog again', () => {
    const { s, start } = humanSession();
    const first = answerAll(s, start + 2_000, (l) => l === 'B');
    expect(first.pendingConsent).toEqual([]);
    const later = snap(s.handle({ type: 'advance', to: start + 3 * MIN }));
    // Back to 1 s: the dialogs open then are open again, with the tokens they had.
    const back = snap(s.handle({ type: 'seek', t: start + 1_000 }));
    expect(back.pendingConsent.length).toBeGreaterThan(0);
    const forward = snap(s.handle({ type: 'seek', t: start + 3 * MIN }));
    expect(forward.lanes).toEqual(later.lanes);
    expect(forward.pendingConsent).toEqual(later.pendingConsent);
    expect(forward.human).toEqual(['A', 'B']);
  });

  it('a reload (the timeline, re-simulated, then a restart) keeps the answers and who answers', () => {
    const { s, start, end } = humanSession();
    answerAll(s, start + 2_000, () => false);
    answerAll(s, start + 9_000, () => true);
    s.handle({ type: 'setHuman', human: ['B'] });
    s.handle({ type: 'advance', to: start + 10 * MIN });
    const [timeline] = only(s.handle({ type: 'timeline' }), 'timeline');
    expect(timeline!.actions.filter((a) => a.kind === 'consent').length).toBeGreaterThan(1);
    // What the page had: the run with a restart at 10 min.
    s.handle({ type: 'restart' });
    const want = snap(s.handle({ type: 'advance', to: end }));

    const reloaded = new Session();
    const rs = reloaded.handle({
      type: 'load',
      scenario: data,
      at: { t: timeline!.t, actions: timeline!.actions }
    });
    expect(only(rs, 'restarted')).toHaveLength(1);
    const view = snap(reloaded.handle({ type: 'advance', to: end }));
    expect(view.human).toEqual(['B']);
    expect(view.lanes.A.counters).toEqual(want.lanes.A.counters);
    expect(view.lanes.B.counters).toEqual(want.lanes.B.counters);
  });

  it('a malformed action in the run memory is refused with its path, and nothing runs', () => {
    const s = new Session();
    const [r] = s.handle({
      type: 'load',
      scenario: data,
      at: {
        t: scenario.start + MIN,
        actions: [
          {
            t: scenario.start,
            events: 3,
            kind: 'consent',
            lane: 'A',
            connection: 'x#1',
            requestId: 1
          }
        ] as unknown as TimelineAction[]
      }
    });
    expect(r).toMatchObject({ type: 'loaded', ok: false });
    const errors = r?.type === 'loaded' && !r.ok ? r.errors : [];
    expect(errors[0]?.path).toBe('$.at.actions[0].approved');
    expect(s.sim).toBeNull();
    const bad = parseTimeline({
      t: 0,
      actions: [{ t: 0, events: -1, kind: 'human', lanes: ['C'] }]
    });
    expect(!bad.ok && bad.errors.map((e) => e.path)).toEqual([
      '$.at.actions[0].events',
      '$.at.actions[0].lanes[0]'
    ]);
  });
});
