import { describe, expect, it } from 'vitest';
import type { AuditRecord } from '$lib/machine/types';
import type { InvariantResult } from '$lib/sim/checks/invariants';
import { focusOf } from './guarantee-focus';
import { guaranteeLine, waivedWhy } from './guarantees';

const rec = (lane: string, seq: number, over: Partial<AuditRecord> = {}) =>
  ({ lane, seq, silenced: false, consentShown: false, ...over }) as AuditRecord;

const result = (over: Partial<InvariantResult>): InvariantResult => ({
  id: 'one-frame',
  title: 'Every request gets exactly one frame and one audit record',
  status: 'held',
  summary: '3 of 3 requests answered',
  checked: 3,
  violations: 0,
  offenders: [],
  ...over
});

describe('the Guarantees panel', () => {
  it('marks a kept guarantee ✓ and one given up or broken ✗', () => {
    expect(guaranteeLine(result({}))).toBe('✓ 3 of 3 requests answered');
    expect(
      guaranteeLine(
        result({ status: 'waived', summary: '37 requests got no frame — silence is on' })
      )
    ).toBe('✗ 37 requests got no frame — silence is on');
  });

  it('a broken guarantee links to its offenders, in their lane', () => {
    const f = focusOf(
      result({
        status: 'broken',
        id: 'one-consent',
        offenders: [{ lane: 'B', seq: 7, request: 'x#1/2', t: 0, what: 'again' }]
      })
    );
    expect(f.match(rec('B', 7))).toBe(true);
    expect(f.match(rec('A', 7))).toBe(false);
    expect(f.match(rec('B', 8))).toBe(false);
  });

  it('silence given up links to the silenced rows; consent to the rows that showed a dialog', () => {
    const silence = focusOf(result({ status: 'waived' }));
    expect(silence.match(rec('A', 1, { silenced: true }))).toBe(true);
    expect(silence.match(rec('A', 2))).toBe(false);
    const consent = focusOf(result({ id: 'one-consent' }));
    expect(consent.match(rec('A', 1, { consentShown: true }))).toBe(true);
    expect(consent.match(rec('A', 2))).toBe(false);
  });
});

describe('why a guarantee was given up', () => {
  const waived = (id: InvariantResult['id']): InvariantResult => ({
    id,
    title: '',
    status: 'waived',
    summary: '',
    checked: 1,
    violations: 0,
    offenders: []
  });
  it('names silence for the one frame, and the missing reason for a real client’s refusal', () => {
    expect(waivedWhy(waived('one-frame'))).toMatch(/^Silence gives up one frame/);
    expect(waivedWhy(waived('refusals-typed'))).toMatch(/no reason and no retryable flag/);
  });
});
