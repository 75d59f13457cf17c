/**
 * The files the repository ships (ready-made scenarios, lessons, traces, benchmark scenarios) are
 * read by the same strict rule as any upload: none may hold a member name twice, which
 * `JSON.parse` would silently collapse (issue #19, item 5).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseJsonText } from '../../machine/policy/json-strict';

const FILES = ['static/scenarios', 'static/lessons', 'static/traces', 'bench'].flatMap((dir) =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.json') || f.endsWith('.jsonl'))
    .map((f) => join(dir, f))
);

describe('the shipped JSON files', () => {
  it('are found', () => {
    expect(FILES.length).toBeGreaterThan(20);
  });

  it.each(FILES)('%s: strict JSON, no member name twice', (file) => {
    const text = readFileSync(file, 'utf8');
    const docs = file.endsWith('.jsonl') ? text.split('\n').filter((l) => l.trim()) : [text];
    for (const doc of docs) {
      const r = parseJsonText(doc);
      expect(r.ok ? null : `${r.error.path}: ${r.error.message}`).toBeNull();
    }
  });
});
