import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  compareMoney,
  currencyMismatch,
  fromMicros,
  fromMicrosExact,
  isCurrencyCode,
  money,
  parseMoneyAmount,
  toMicros
} from './money';

describe('parseMoneyAmount / toMicros', () => {
  it.each([
    ['0.05', 50_000],
    ['3', 3_000_000],
    ['0.1027', 102_700],
    ['12.000001', 12_000_001],
    ['0', 0],
    ['5.00', 5_000_000],
    ['0.000001', 1]
  ])('%s is %d micros', (s, micros) => {
    expect(parseMoneyAmount(s)).toEqual({ ok: true, micros });
    expect(toMicros(s)).toBe(micros);
  });

  it.each([
    ['0.0000001', /more than 6 decimals/],
    ['-0.05', /sign/],
    ['+1', /sign/],
    ['1e-3', /exponent/],
    ['1E3', /exponent/],
    ['', /empty/],
    [' 1', /whitespace/],
    ['.5', /both sides/],
    ['5.', /both sides/],
    ['1,5', /not a decimal/],
    ['NaN', /not a decimal/],
    ['99999999999', /too large/]
  ])('rejects %j', (s, why) => {
    const r = parseMoneyAmount(s);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(why);
    expect(() => toMicros(s)).toThrow(why);
  });

  it('rejects non-strings as a value, naming what it got', () => {
    expect(parseMoneyAmount(0.05)).toEqual({
      ok: false,
      error: 'an amount is a decimal string such as "0.05", got a number'
    });
    expect(parseMoneyAmount(null)).toMatchObject({ ok: false });
  });
});

describe('fromMicros', () => {
  it('formats at 4 decimals, rounding half up', () => {
    expect(fromMicros(102_720)).toBe('0.1027');
    expect(fromMicros(9_000)).toBe('0.0090');
    expect(fromMicros(50_000)).toBe('0.0500');
    expect(fromMicros(102_750)).toBe('0.1028'); // exactly half: up
    expect(fromMicros(102_749)).toBe('0.1027');
    expect(fromMicros(0)).toBe('0.0000');
    expect(fromMicros(12_000_001, 6)).toBe('12.000001');
    expect(fromMicros(3_000_000, 2)).toBe('3.00');
    expect(fromMicros(2_500_000, 0)).toBe('3');
    expect(fromMicros(999_950)).toBe('1.0000'); // the carry reaches the whole part
  });

  it('rounds down or up on request', () => {
    expect(fromMicros(102_799, 4, 'down')).toBe('0.1027');
    expect(fromMicros(102_701, 4, 'up')).toBe('0.1028');
    expect(fromMicros(102_700, 4, 'up')).toBe('0.1027');
  });

  it('keeps the sign of a difference', () => {
    expect(fromMicros(-9_000)).toBe('-0.0090');
  });

  it('throws on non-integers and bad decimals (a bug, not input)', () => {
    expect(() => fromMicros(1.5)).toThrow(/safe integer/);
    expect(() => fromMicros(1, 7)).toThrow(/decimals/);
  });

  it('fromMicrosExact keeps every significant digit, at least 4', () => {
    expect(fromMicrosExact(50_000)).toBe('0.0500');
    expect(fromMicrosExact(397_280)).toBe('0.39728');
    expect(fromMicrosExact(1)).toBe('0.000001');
    expect(fromMicrosExact(3_000_000, 2)).toBe('3.00');
    expect(fromMicrosExact(75_000, 2)).toBe('0.075');
  });

  it('round-trips: toMicros(fromMicros(m, 6)) === m (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (m) => {
        expect(toMicros(fromMicros(m, 6))).toBe(m);
        expect(toMicros(fromMicrosExact(m))).toBe(m);
      })
    );
  });

  it('4-decimal formatting is within half a display unit (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10 ** 12 }), (m) => {
        const back = toMicros(fromMicros(m));
        expect(Math.abs(back - m)).toBeLessThanOrEqual(50);
        expect(toMicros(fromMicros(m, 4, 'down'))).toBeLessThanOrEqual(m);
        expect(toMicros(fromMicros(m, 4, 'up'))).toBeGreaterThanOrEqual(m);
      })
    );
  });
});

describe('money and currencies', () => {
  it('builds Money values', () => {
    expect(money(102_720, 'USD')).toEqual({ amount: '0.1027', currency: 'USD' });
    expect(money(50_000, 'EUR', 2)).toEqual({ amount: '0.05', currency: 'EUR' });
  });

  it('checks currency codes', () => {
    expect(isCurrencyCode('USD')).toBe(true);
    expect(isCurrencyCode('usd')).toBe(false);
    expect(isCurrencyCode('USDT')).toBe(false);
    expect(isCurrencyCode(1)).toBe(false);
  });

  it('never compares across currencies', () => {
    expect(currencyMismatch('USD', 'USD')).toBeNull();
    expect(currencyMismatch('USD', 'EUR')).toMatch(/mismatch/);
    expect(
      compareMoney({ amount: '0.05', currency: 'USD' }, { amount: '0.1027', currency: 'USD' })
    ).toEqual({
      ok: true,
      cmp: -1
    });
    expect(
      compareMoney({ amount: '0.05', currency: 'USD' }, { amount: '0.050', currency: 'USD' })
    ).toEqual({
      ok: true,
      cmp: 0
    });
    expect(
      compareMoney({ amount: '0.05', currency: 'USD' }, { amount: '0.05', currency: 'EUR' })
    ).toMatchObject({
      ok: false
    });
    expect(
      compareMoney({ amount: 'x', currency: 'USD' }, { amount: '0.05', currency: 'USD' })
    ).toMatchObject({
      ok: false
    });
  });
});
