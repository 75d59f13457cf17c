/**
 * The provider's streams (issue #19): a response of many chunks costs one pending timer at a
 * time, in the order an eager schedule gave its chunks; no response is more than
 * `LIMITS.chunksPerResponse` chunks, even for a trace's request that no scenario check saw.
 */
import { describe, expect, it } from 'vitest';
import type { ProviderEvent, ProviderInput } from '../../machine/authorize';
import { VirtualClock } from '../world/clock';
import { LIMITS } from '../input/limits';
import { DEFAULT_PROVIDER, SimProvider, type ProviderSpec } from './provider';
import { Rng } from '../world/rng';

const input = (maxTokens: number): ProviderInput => ({
  server: 's',
  model: 'example-model-v2',
  params: { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens },
  inputTokens: 1,
  maxTokens,
  contextApplied: 'none',
  now: 0
});

function stream(spec: Partial<ProviderSpec>, maxTokens: number) {
  const clock = new VirtualClock(0);
  const provider = new SimProvider(
    { ...DEFAULT_PROVIDER, outputFraction: 1, latencyJitter: 0, ...spec },
    clock,
    new Rng(7)
  );
  const events: (ProviderEvent & { at: number })[] = [];
  let mostPending = 0;
  const stop = provider.source(input(maxTokens), (e) => {
    events.push({ ...e, at: clock.now() });
    mostPending = Math.max(mostPending, clock.pending);
  });
  mostPending = Math.max(mostPending, clock.pending);
  return { clock, events, stop, pending: () => mostPending };
}

describe('provider streams', () => {
  // Before: 2,000,002 timers set at the call (30 s and 900 MB for one request a lane).
  it('keeps one timer pending for a stream of 20,000 chunks, and sends them in order', () => {
    const s = stream({ chunkTokens: 50, chunkIntervalMs: 40 }, 1_000_000);
    expect(s.clock.pending).toBe(1);
    s.clock.runUntil(Infinity);
    expect(s.pending()).toBe(1);
    const chunks = s.events.filter((e) => e.type === 'provider.chunk');
    expect(chunks).toHaveLength(20_000);
    expect(chunks.reduce((n, e) => n + (e.type === 'provider.chunk' ? e.tokens : 0), 0)).toBe(
      1_000_000
    );
    expect(s.events[0]).toMatchObject({ type: 'provider.started', at: 400 });
    expect(chunks[1]!.at - chunks[0]!.at).toBe(40);
    expect(s.events.at(-1)).toMatchObject({ type: 'provider.done', at: 400 + 19_999 * 40 });
  });

  it('keeps a chunk at one instant behind the events set before it, as an eager schedule did', () => {
    const clock = new VirtualClock(0);
    const provider = new SimProvider(
      { ...DEFAULT_PROVIDER, latencyMs: 0, latencyJitter: 0, chunkIntervalMs: 0, chunkTokens: 1 },
      clock,
      new Rng(7)
    );
    const seen: string[] = [];
    provider.source(input(3), (e) => {
      seen.push(e.type);
      // Set while the stream runs, at the same instant: after all of the stream's own events.
      if (e.type === 'provider.started') clock.setTimeout(() => seen.push('later'), 0);
    });
    clock.setTimeout(() => seen.push('after the call'), 0);
    clock.runUntil(Infinity);
    expect(seen.slice(0, 2)).toEqual(['provider.started', 'provider.chunk']);
    expect(seen.indexOf('after the call')).toBeGreaterThan(seen.indexOf('provider.done'));
    expect(seen.indexOf('later')).toBeGreaterThan(seen.indexOf('after the call'));
  });

  it('stops at once when the host cancels it mid-stream', () => {
    const s = stream({ chunkTokens: 1, chunkIntervalMs: 10 }, 100);
    s.clock.runUntil(400 + 10 * 9);
    s.stop?.();
    s.clock.runUntil(Infinity);
    expect(s.stop).toBeTypeOf('function');
    expect(s.events.filter((e) => e.type === 'provider.chunk')).toHaveLength(10);
    expect(s.events.some((e) => e.type === 'provider.done')).toBe(false);
  });

  // A trace's request is not checked against the scenario's chunk size.
  it('streams a trace request of a million tokens at one token a chunk as at most 20,000 chunks', () => {
    const s = stream({ chunkTokens: 1, chunkIntervalMs: 0 }, 1_000_000);
    s.clock.runUntil(Infinity);
    const chunks = s.events.filter((e) => e.type === 'provider.chunk');
    expect(chunks).toHaveLength(LIMITS.chunksPerResponse);
    expect(chunks.reduce((n, e) => n + (e.type === 'provider.chunk' ? e.tokens : 0), 0)).toBe(
      1_000_000
    );
  });
});
