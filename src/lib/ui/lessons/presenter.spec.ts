import { describe, expect, it } from 'vitest';
import { SERIES_KEYS } from '$lib/sim/engine/metrics';
import { CHARTS } from '../chart-data';
import {
  isStep,
  keyAction,
  lessonChart,
  neighbour,
  nextScale,
  paceSpeed,
  SCALES,
  STEPS
} from './presenter';

const key = (k: string, editing = false, modified = false) => ({ key: k, editing, modified });

describe('steps', () => {
  it('run Predict → Run → Explain → Try, with nothing beyond either end', () => {
    expect(STEPS).toEqual(['predict', 'run', 'explain', 'try']);
    expect(neighbour('predict', 1)).toBe('run');
    expect(neighbour('try', -1)).toBe('explain');
    expect(neighbour('predict', -1)).toBeNull();
    expect(neighbour('try', 1)).toBeNull();
    expect(isStep('explain')).toBe(true);
    expect(isStep('handout')).toBe(false);
  });
});

describe('presenter keys', () => {
  it('map arrows, Space, F, +/-, B and Esc', () => {
    expect(keyAction(key('ArrowRight'), true)).toBe('next');
    expect(keyAction(key('ArrowLeft'), true)).toBe('prev');
    expect(keyAction(key(' '), true)).toBe('toggle');
    expect(keyAction(key('f'), true)).toBe('fullscreen');
    expect(keyAction(key('+'), true)).toBe('bigger');
    expect(keyAction(key('='), true)).toBe('bigger');
    expect(keyAction(key('-'), true)).toBe('smaller');
    expect(keyAction(key('B'), true)).toBe('blank');
    expect(keyAction(key('Escape'), true)).toBe('list');
    expect(keyAction(key('x'), true)).toBeNull();
  });

  it('leave typing, buttons and browser shortcuts alone', () => {
    expect(keyAction(key('ArrowRight', true), true)).toBeNull();
    expect(keyAction(key('-', true), true)).toBeNull();
    expect(keyAction(key('Escape', true), true)).toBe('list');
    expect(keyAction(key(' '), false)).toBeNull();
    expect(keyAction(key('f', false, true), true)).toBeNull();
  });
});

describe('type size', () => {
  it('steps up and down and stops at the ends', () => {
    expect(nextScale(1, 1)).toBe(1.125);
    expect(nextScale(1, -1)).toBe(0.875);
    expect(nextScale(SCALES[SCALES.length - 1]!, 1)).toBe(SCALES[SCALES.length - 1]);
    expect(nextScale(SCALES[0], -1)).toBe(SCALES[0]);
  });
});

describe('pace', () => {
  it('plays the whole scenario in the lesson’s run time', () => {
    expect(paceSpeed(3_600_000, 20)).toBe(180);
    expect(paceSpeed(1000, 60)).toBe(1);
  });
});

describe('the lesson chart', () => {
  it('reuses the playground’s chart for a series it draws', () => {
    expect(lessonChart('consentPrompts')).toBe(CHARTS.find((c) => c.id === 'consent'));
  });

  it('draws any series, money in dollars', () => {
    for (const k of SERIES_KEYS) expect(lessonChart(k).keys).toEqual([k]);
    expect(lessonChart('requests').title).toBe('Requests');
    expect(lessonChart('requests').format(1234)).toBe('1,234');
  });
});
