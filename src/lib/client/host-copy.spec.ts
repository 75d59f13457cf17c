/**
 * A client host and its requests in flight, copied by the generic copier (machine/clone.ts) from
 * their declared rules: a copy taken while a request waits on its dialog goes on by itself — the
 * original's answer never shows in the copy's request, nor the copy's in the original's — and a
 * host or a run that cannot be copied says why.
 */
import { describe, expect, it } from 'vitest';
import type { AuthOutput, ConsentInput } from '../machine/authorize';
import { resolveClientConfig } from '../machine/config';
import { CloneMap, copyable, NotCloneable } from '../machine/clone';
import { defaultPolicy } from '../machine/policy';
import type { SamplingParams } from '../machine/types';
import { MemoryAuditLog } from '../store/audit-log';
import { ConnectionDecisionStore } from '../store/connection-store';
import { VirtualClock } from '../sim/world/clock';
import { cardsByModel, createProvider, DEFAULT_PROVIDER } from '../sim/actors/provider';
import { Rng } from '../sim/world/rng';
import type { ConsentActor, ConsentReply, ProviderActor } from './driver';
import { ClientHost, type DecisionListener, type Executor, type RunHandle } from './host';
import './actor-executor';

const params: SamplingParams = {
  systemPrompt: 'You summarise release notes.',
  messages: [{ role: 'user', content: { type: 'text', text: 'Summarise 2.3.' } }],
  maxTokens: 200
};

/** A person at the dialog, as data: the dialogs open, answered when the test says. */
class Desk implements ConsentActor {
  open: ConsentReply[] = [];
  ask(_input: ConsentInput, reply: ConsentReply): number {
    this.open.push(reply);
    return this.open.length - 1;
  }
  stop(ticket: unknown): void {
    this.open.splice(ticket as number, 1);
  }
}
copyable(Desk, { name: 'spec.Desk' });

/** Where a request's outcome goes: kept, so that a copy has its own. */
class Outcome implements DecisionListener {
  out: AuthOutput | null = null;
  decided(out: AuthOutput): void {
    this.out = out;
  }
}
copyable(Outcome, { name: 'spec.Outcome' });

/** One host with one request waiting on its dialog. */
function waiting(executor: Executor = 'table', provider?: ProviderActor) {
  const clock = new VirtualClock(Date.UTC(2026, 2, 10, 9));
  const desk = new Desk();
  const host = new ClientHost({
    config: resolveClientConfig({ store: 'connection' }),
    policy: defaultPolicy(),
    cards: cardsByModel(DEFAULT_PROVIDER.cards),
    store: new ConnectionDecisionStore(),
    audit: new MemoryAuditLog(),
    clock,
    consent: desk,
    provider: provider ?? createProvider(DEFAULT_PROVIDER, clock, new Rng(1)).provider,
    executor
  });
  const outcome = new Outcome();
  const handle = host.authorize(
    { id: 1, server: 'release-notes', connection: 'release-notes#1', params, receivedAt: 0 },
    outcome
  );
  return { clock, desk, host, outcome, handle };
}

/**
 * The copy of the whole, through one map: the same host, desk, clock and request, copied; its
 * audit log a new one (a log the page keeps is not copied: the engine substitutes its own).
 */
function copyOf(w: ReturnType<typeof waiting>): ReturnType<typeof waiting> {
  const m = mapFor(w.host);
  return m.walk(() => ({
    clock: m.get(w.clock),
    desk: m.get(w.desk),
    host: m.get(w.host),
    outcome: m.get(w.outcome),
    handle: m.get(w.handle as RunHandle & object)
  }));
}

function mapFor(host: ClientHost): CloneMap {
  const m = new CloneMap();
  m.set(host.audit, new MemoryAuditLog());
  return m;
}

function finish(w: ReturnType<typeof waiting>, approved: boolean): AuthOutput {
  w.desk.open[0]!.answer(approved);
  w.clock.runUntil(w.clock.now() + 120_000);
  if (!w.outcome.out) throw new Error('no outcome');
  return w.outcome.out;
}

describe('a host copied with a request in flight', () => {
  it('continues as the original would, and each request writes only its own context', () => {
    const a = waiting();
    expect(a.handle.path!()).toContain('consenting');
    const before = a.handle.path!();
    const b = copyOf(a);
    expect(b.host).not.toBe(a.host);
    expect(b.handle.path!()).toEqual(before);

    // The original approves first: its request goes on to the model and is allowed...
    const allowed = finish(a, true);
    expect(allowed.audit.outcome).not.toBe('denied');
    expect(allowed.path).toContain('calling');
    // ...and the copy's request is still where it was copied, its path as it was.
    expect(b.outcome.out).toBeNull();
    expect(b.handle.path!()).toEqual(before);

    // The copy denies: its own outcome, from its own context.
    const denied = finish(b, false);
    expect(denied.audit.outcome).toBe('denied');
    expect(denied.path).not.toContain('calling');
    expect(denied.audit.seq).toBe(allowed.audit.seq);
    expect(a.outcome.out).toBe(allowed);
  });

  it('a copy taken again from the copy, then the original, each go on alone', () => {
    const a = waiting();
    const b = copyOf(a);
    const c = copyOf(b);
    const fromC = finish(c, false);
    expect(b.handle.path!()).toEqual(a.handle.path!());
    const fromA = finish(a, false);
    const fromB = finish(b, false);
    expect(fromB).toEqual(fromA);
    expect(fromC).toEqual(fromA);
  });

  it('a host whose dialogs are a callback cannot be copied, and the error names the field', () => {
    const clock = new VirtualClock(0);
    const host = new ClientHost({
      config: resolveClientConfig({}),
      policy: defaultPolicy(),
      cards: {},
      store: new ConnectionDecisionStore(),
      audit: new MemoryAuditLog(),
      clock,
      consent: () => undefined,
      provider: createProvider(DEFAULT_PROVIDER, clock, new Rng(1)).provider,
      executor: 'table'
    });
    expect(() => mapFor(host).get(host)).toThrow(/ClientHost\.consent holds a function/);
  });

  it('a host running XState actors cannot be copied', () => {
    const a = waiting('actor');
    expect(() => mapFor(a.host).get(a.host)).toThrow(NotCloneable);
    expect(() => mapFor(a.host).get(a.host)).toThrow(/XState actors/);
  });

  it('a request mid-step cannot be copied; at rest again, it can', () => {
    // The model call starts while the run handles the approval: it asks for a copy of the run.
    const probe = new Probe();
    const a = waiting('table', probe);
    probe.of = a;
    a.desk.open[0]!.answer(true);
    expect(probe.error).toBeInstanceOf(NotCloneable);
    expect(String(probe.error)).toMatch(/a request is mid-step/);
    // Waiting on the model, it rests.
    const b = mapFor(a.host).get(a.handle as RunHandle & object) as RunHandle;
    expect(b.path!()).toEqual(a.handle.path!());
    expect(b.path!()).toContain('calling');
  });
});

/** A model that, asked for a call, asks for a copy of the request that calls it. */
class Probe implements ProviderActor {
  of: { host: ClientHost; handle: RunHandle } | null = null;
  error: unknown = null;
  call(): void {
    try {
      if (this.of) mapFor(this.of.host).get(this.of.handle as RunHandle & object);
    } catch (e) {
      this.error = e;
    }
  }
  stop(): void {}
}
copyable(Probe, { name: 'spec.Probe', fields: { error: 'shared' } });
