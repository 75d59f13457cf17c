import { describe, expect, it } from 'vitest';
import { defaultPolicy } from '$lib/machine/policy';
import { leftOut, linkedNotice, readLink } from './link-run';
import { encodeScenarioHash } from './share';

const start = Date.parse('2026-03-10T09:00:00Z');
const at = (min: number) => start + min * 60_000;
const fork = {
  version: 1,
  atMs: 600_000,
  lane: 'B',
  change: { kind: 'config', client: { store: 'connection' } }
} as const;

describe('a share link’s run, on the page', () => {
  it('tells the recipient which changes the link brought and where they fall', () => {
    const policy = {
      t: at(3),
      events: 400,
      kind: 'policy',
      lane: 'A',
      policy: defaultPolicy()
    } as const;
    const config = {
      t: at(10),
      events: 900,
      kind: 'config',
      lane: 'B',
      client: { store: 'connection' },
      what: 'lane B: store → connection-scoped'
    } as const;
    expect(linkedNotice({ actions: [config, policy], fork: null, human: [] }, start)).toBe(
      "Opened from a share link: the sender's run, its 2 changes applied where they were made — 0:03:00 lane A: policy edited; 0:10:00 lane B: store → connection-scoped."
    );
    const restart = { t: at(20), events: 2000, kind: 'restart' } as const;
    expect(
      linkedNotice(
        { actions: [restart], fork: { spec: fork, base: [policy] }, human: [] },
        start,
        1
      )
    ).toBe(
      "Opened from a share link: the sender's run on its fork, its 2 changes applied where they were made — 0:03:00 lane A: policy edited; and 1 more."
    );
  });

  it('reads a link’s timeline, or says why it cannot and leaves the forks to the page', async () => {
    const data = { name: 'x' };
    const old = await readLink(encodeScenarioHash(data, fork));
    expect(old).toEqual({ run: null, fork, problem: '' });
    const good = await readLink(
      encodeScenarioHash(data, fork, { version: 1, actions: [], bases: [[]] })
    );
    expect(good).toEqual({
      run: { actions: [], fork: { spec: fork, base: [] }, human: [] },
      fork: null,
      problem: ''
    });
    const bad = await readLink(encodeScenarioHash(data, fork, { version: 2, actions: [] }));
    expect(bad.run).toBeNull();
    expect(bad.fork).toEqual(fork);
    expect(bad.problem).toMatch(
      /^The shared link's timeline could not be read at \$\.version: .*: the run opens without the changes the sender made during it/
    );
  });

  it('tells the sender what a link cannot carry', () => {
    expect(leftOut({ trace: false, clearedAt: [] }, start)).toBe('');
    expect(leftOut({ trace: true, clearedAt: [at(12)] }, start)).toBe(
      "The link leaves out the recorded trace this run replays (a link carries the scenario, not the trace: send the trace file too); and the stored decisions cleared at 0:12:00 (clearing is not part of the run's timeline: the recipient's run keeps them)."
    );
  });
});
