/**
 * A share link's run (issue #18): the sender's timeline — edits, restarts and answers with their
 * times, forks with the actions they were made on — re-applied where it was, so the recipient's
 * run is the sender's: the same numbers and the same marks on the chart.
 */
import { describe, expect, it } from 'vitest';
import { parsePolicy, type Policy } from '../../machine/policy';
import type { ForkSpec } from '../engine/fork';
import { linkOf, parseLinkTimeline, type LinkedRun } from '../timeline/link-timeline';
import type { Snapshot } from './protocol';
import { only, readScenario as read, snap } from './replies.testing';
import { Session } from './session';

const MIN = 60_000;
const data = read('reconnect-bypass');

/** Lane A's policy with consent set to deny: from then on no model call, only denials. */
function denyAll(): Policy {
  const base = (data.lanes as Record<string, { policy: Record<string, unknown> }>).A!.policy;
  const p = parsePolicy({
    ...base,
    defaults: { ...(base.defaults as object), consent: 'deny' }
  });
  if (!p.ok) throw new Error('bad policy');
  return p.policy;
}

function loaded(s: Session, extra: Record<string, unknown> = {}) {
  const [l] = only(s.handle({ type: 'load', scenario: data, ...extra }), 'loaded');
  if (!l?.ok) throw new Error(`not loaded: ${JSON.stringify(l)}`);
  return l;
}

/** The link the sender's page makes of its run now, as the recipient's page reads it. */
function linkFrom(s: Session): LinkedRun {
  const [t] = only(s.handle({ type: 'timeline' }), 'timeline');
  const link = linkOf(t!);
  const r = parseLinkTimeline(JSON.parse(JSON.stringify(link.timeline)), link.fork);
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.run;
}

function open(link: LinkedRun): Session {
  const s = new Session();
  loaded(s, {
    link: { actions: link.actions, fork: link.fork },
    ...(link.human.length ? { human: link.human } : {})
  });
  return s;
}

const view = (v: Snapshot) => ({ lanes: v.lanes, marks: v.marks, guarantees: v.guarantees });

describe('a share link carries the run’s timeline', () => {
  it('a policy edit at minute 3 and a config change at minute 10 arrive where they were made', () => {
    const sender = new Session();
    const l = loaded(sender);
    sender.handle({ type: 'advance', to: l.start + 3 * MIN });
    sender.handle({ type: 'setPolicy', lane: 'A', policy: denyAll() });
    sender.handle({ type: 'advance', to: l.start + 10 * MIN });
    sender.handle({
      type: 'setConfig',
      lane: 'B',
      client: { store: 'connection' },
      what: 'lane B: store → connection'
    });
    const end = snap(sender.handle({ type: 'advance', to: l.end }));
    expect(end.marks.filter((m) => m.kind === undefined)).toHaveLength(2);

    const recipient = open(linkFrom(sender));
    const first = snap(recipient.handle({ type: 'advance', to: l.start }));
    expect(first.now).toBe(l.start);
    const got = snap(recipient.handle({ type: 'advance', to: l.end }));
    expect(view(got)).toEqual(view(end));
    expect(got.lanes.A.counters.providerCalls).toBeGreaterThan(0); // the calls before minute 3
  });

  it('edits still ahead of the sender’s run after a seek back travel too', () => {
    const sender = new Session();
    const l = loaded(sender);
    sender.handle({ type: 'advance', to: l.start + 3 * MIN });
    sender.handle({ type: 'setPolicy', lane: 'A', policy: denyAll() });
    sender.handle({ type: 'advance', to: l.start + 10 * MIN });
    sender.handle({ type: 'seek', t: l.start + MIN });
    const link = linkFrom(sender);
    expect(link.actions.map((a) => a.kind)).toEqual(['policy']);
    const end = snap(sender.handle({ type: 'advance', to: l.end }));
    const got = snap(open(link).handle({ type: 'advance', to: l.end }));
    expect(view(got)).toEqual(view(end));
  });

  it('a fork made after an edit, with an edit after it, opens at the fork point and plays on as the sender’s', () => {
    const sender = new Session();
    const l = loaded(sender);
    sender.handle({ type: 'advance', to: l.start + 3 * MIN });
    sender.handle({ type: 'setPolicy', lane: 'A', policy: denyAll() });
    sender.handle({ type: 'advance', to: l.start + 10 * MIN });
    const fork: ForkSpec = {
      version: 1,
      atMs: 10 * MIN,
      lane: 'B',
      change: { kind: 'config', client: { store: 'connection' } }
    };
    sender.handle({ type: 'fork', fork });
    sender.handle({ type: 'advance', to: l.start + 20 * MIN });
    sender.handle({ type: 'restart' });
    const end = snap(sender.handle({ type: 'advance', to: l.end }));

    const link = linkFrom(sender);
    expect(link.fork?.spec).toEqual(fork);
    expect(link.fork?.base.map((a) => a.kind)).toEqual(['policy']);
    const recipient = open(link);
    expect(snap(recipient.handle({ type: 'advance', to: l.start })).now).toBe(l.start + 10 * MIN);
    const [state] = only(recipient.handle({ type: 'fork?' }), 'forkState');
    expect(state!.forks).toEqual([fork]);
    const got = snap(recipient.handle({ type: 'advance', to: l.end }));
    expect(view(got)).toEqual(view(end));
  });

  it('a person’s answers and who answers travel with their times', () => {
    const sender = new Session();
    const l = loaded(sender, { human: ['A'] });
    let v = snap(sender.handle({ type: 'advance', to: l.start + 2 * MIN }));
    // Answer every dialog lane A's person is asked in the first minutes, then hand back.
    for (let i = 0; i < 3 && v.pendingConsent.length; i++) {
      const p = v.pendingConsent[0]!;
      v = snap(sender.handle({ type: 'consent', lane: p.lane, token: p.token, approved: i === 1 }));
    }
    sender.handle({ type: 'setHuman', human: [] });
    const link = linkFrom(sender);
    expect(link.human).toEqual(['A']);
    expect(link.actions.some((a) => a.kind === 'consent')).toBe(true);
    const end = snap(sender.handle({ type: 'advance', to: l.end }));
    const got = snap(open(link).handle({ type: 'advance', to: l.end }));
    expect(view(got)).toEqual(view(end));
  });

  it('a timeline that does not fit the scenario is refused, saying where', () => {
    const s = new Session();
    const rs = s.handle({
      type: 'load',
      scenario: data,
      link: { actions: [{ t: 0, events: 0, kind: 'restart', lane: 'A' } as never] }
    });
    const [l] = only(rs, 'loaded');
    expect(l).toMatchObject({ ok: false });
    expect(!l!.ok && l!.errors[0]!.path).toBe('$.link.actions[0].lane');
    const far = s.handle({
      type: 'load',
      scenario: data,
      link: {
        actions: [],
        fork: {
          spec: {
            version: 1,
            atMs: 5 * MIN,
            lane: 'A',
            change: { kind: 'config', client: {} }
          },
          // An action the run never reaches where it says (a link from another build's run).
          base: [{ t: Date.parse('2026-03-10T09:01:00Z'), events: 1, kind: 'restart' }]
        }
      }
    });
    const [bad] = only(far, 'loaded');
    expect(bad).toMatchObject({ ok: false, errors: [{ path: '$.link' }] });
    expect(!bad!.ok && bad!.errors[0]!.message).toMatch(/re-simulation diverged/);
  });
});
