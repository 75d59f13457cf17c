/**
 * The policy editor's draft, with the real policy parser: an invalid draft is refused and the
 * policy in force stays; a valid one is applied and the servers it invalidated are said; the
 * learner's edits survive the page's policy changing under them.
 */
import { describe, expect, it } from 'vitest';
import { defaultPolicy, parsePolicy, type Policy } from '$lib/machine/policy';
import { formatPolicy, PolicyDraft } from './policy-draft.svelte';
import { markerRange, offsetOf } from './policy-editor';

const load = async () => parsePolicy;

function draftOf(policy: Policy = defaultPolicy()) {
  const shown: string[] = [];
  const d = new PolicyDraft((t) => shown.push(t));
  d.parser = parsePolicy;
  d.follow(policy);
  return { d, shown };
}

describe('the policy draft', () => {
  it('starts as the policy in force, valid and applied', () => {
    const { d, shown } = draftOf();
    expect(d.text).toBe(formatPolicy(defaultPolicy()));
    expect(shown).toEqual([d.text]);
    expect(d.parsed?.ok).toBe(true);
    expect(d.unapplied).toBe(false);
    expect(d.errors).toEqual([]);
  });

  it('refuses an invalid draft, keeps the policy in force, and forgets the refusal on the next edit', async () => {
    const { d } = draftOf();
    const before = d.inForce;
    d.edit(d.text.replace('"version": 1', '"version": 7'));
    expect(d.errors.length).toBeGreaterThan(0);
    expect(d.errors[0]!.path).toMatch(/version/);
    let applied = 0;
    await d.apply(async () => (applied++, {}), load);
    expect(applied).toBe(0);
    expect(d.outcome).toEqual({ kind: 'refused', count: d.errors.length });
    expect(d.inForce).toBe(before);
    d.edit(d.text + ' ');
    expect(d.outcome).toBeNull();
  });

  it('applies a valid draft and lists only the servers whose decisions it invalidated', async () => {
    const { d } = draftOf();
    const edited = { ...defaultPolicy(), servers: { alpha: { consent: 'deny' } } } as Policy;
    d.edit(JSON.stringify(edited));
    expect(d.unapplied).toBe(true);
    await d.apply(async (p) => {
      expect(p.servers).toHaveProperty('alpha');
      return { alpha: 3, beta: 0 };
    }, load);
    expect(d.outcome).toEqual({ kind: 'applied', invalidated: [['alpha', 3]] });
    expect(d.unapplied).toBe(false);
    expect(d.inForce?.servers).toHaveProperty('alpha');
  });

  it('says why an apply failed, and keeps the policy in force', async () => {
    const { d } = draftOf();
    const before = d.inForce;
    d.edit(JSON.stringify({ ...defaultPolicy(), servers: { alpha: { consent: 'deny' } } }));
    await d.apply(async () => {
      throw new Error('The worker is busy.');
    }, load);
    expect(d.outcome).toEqual({ kind: 'failed', message: 'The worker is busy.' });
    expect(d.inForce).toBe(before);
    expect(d.applying).toBe(false);
  });

  it('loads the parser on Apply when it is not loaded yet, and says so when that fails', async () => {
    const d = new PolicyDraft();
    d.follow(defaultPolicy());
    expect(d.parsed).toBeNull();
    await d.apply(
      async () => ({}),
      async () => {
        throw new Error('Failed to fetch dynamically imported module');
      }
    );
    expect(d.outcome).toEqual({
      kind: 'failed',
      message: 'Failed to fetch dynamically imported module'
    });
    await d.apply(async () => ({}), load);
    expect(d.parser).toBe(parsePolicy);
    expect(d.outcome).toEqual({ kind: 'applied', invalidated: [] });
  });

  it('follows the page while untouched, and keeps the learner’s edit when the page changes', () => {
    const { d } = draftOf();
    const next = { ...defaultPolicy(), servers: { beta: { consent: 'ask' } } } as Policy;
    d.follow(next);
    expect(d.text).toBe(formatPolicy(next));
    d.edit(d.text.replace('"ask"', '"deny"'));
    const mine = d.text;
    d.follow(defaultPolicy());
    expect(d.text).toBe(mine);
    expect(d.inForce).toEqual(defaultPolicy());
    d.reset();
    expect(d.text).toBe(formatPolicy(defaultPolicy()));
  });
});

describe('places in the policy text', () => {
  it('turns a line and column into an offset, clamped to the text', () => {
    const s = 'ab\ncde\nf';
    expect(offsetOf(s, 1, 1)).toBe(0);
    expect(offsetOf(s, 2, 2)).toBe(4);
    expect(offsetOf(s, 3, 9)).toBe(s.length);
    expect(offsetOf(s, 9, 1)).toBe(s.length);
  });

  it('underlines at least one character, and the first line for an error with no place', () => {
    const max = () => 12;
    expect(markerRange({ path: 'a', message: 'm', line: 2, column: 3 }, 5, max)).toEqual({
      startLineNumber: 2,
      startColumn: 3,
      endLineNumber: 2,
      endColumn: 4
    });
    expect(
      markerRange({ path: 'a', message: 'm', line: 9, column: 1, endLine: 12 }, 5, max)
    ).toEqual({
      startLineNumber: 5,
      startColumn: 1,
      endLineNumber: 5,
      endColumn: 2
    });
    expect(markerRange({ path: '(policy)', message: 'm' }, 5, max)).toEqual({
      startLineNumber: 1,
      startColumn: 1,
      endLineNumber: 1,
      endColumn: 12
    });
  });
});
