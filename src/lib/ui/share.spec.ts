import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { compressToEncodedURIComponent } from 'lz-string';
import { parseScenario } from '../sim/input/scenario';
import { defaultPolicy } from '../machine/policy';
import { parseFork } from '../sim/engine/fork';
import { linkOf, parseLinkTimeline } from '../sim/timeline/link-timeline';
import {
  decodeForkHash,
  decodeScenarioHash,
  decodeTimelineHash,
  encodeScenarioHash,
  hasScenarioHash,
  HASH_PREFIX,
  MAX_HASH_CHARS
} from './share';

const SCENARIO_DIR = new URL('../../../static/scenarios/', import.meta.url);

function roundTrip(data: unknown): unknown {
  const r = decodeScenarioHash(encodeScenarioHash(data));
  if (!r.ok) throw new Error(r.error);
  return r.data;
}

function errorOf(hash: string): string {
  const r = decodeScenarioHash(hash);
  expect(r.ok).toBe(false);
  return r.ok ? '' : r.error;
}

/** A scenario with 50 distinct servers, each with its own prompt and a policy block in lane B. */
function fiftyServerScenario() {
  const behaviours = ['well-behaved', 'naive-retrier', 'tight-loop', 'prompt-mutator'];
  const servers = Array.from({ length: 50 }, (_, i) => ({
    name: `server-${String(i + 1).padStart(2, '0')}`,
    behaviour: behaviours[i % behaviours.length]!,
    request: {
      systemPrompt: `You are assistant number ${i + 1}.`,
      prompt: `Summarise document {n} for team ${i + 1}.`,
      maxTokens: 200 + 10 * i
    },
    intervalMs: 60_000 + 1_000 * i
  }));
  const policyA = defaultPolicy();
  const policyB = defaultPolicy();
  for (const s of servers.slice(0, 25)) {
    policyB.servers[s.name] = {
      rateLimit: { requests: 5, windowMs: 600_000 },
      budget: { amount: '0.25', currency: 'USD', windowMs: 86_400_000 }
    };
  }
  return {
    version: 1,
    name: 'fifty-servers',
    title: 'Fifty servers',
    summary: 'A larger population, to size the share link.',
    seed: 1234,
    durationMs: 3_600_000,
    servers,
    lanes: {
      A: { label: 'Defaults only', client: {}, policy: policyA },
      B: { label: 'Per-server limits', client: { store: 'durable' }, policy: policyB }
    }
  };
}

describe('encodeScenarioHash / decodeScenarioHash', () => {
  it('round-trips every ready-made scenario byte for byte', () => {
    const files = readdirSync(SCENARIO_DIR).filter((f) => f.endsWith('.json'));
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) {
      const data: unknown = JSON.parse(readFileSync(new URL(f, SCENARIO_DIR), 'utf8'));
      const hash = encodeScenarioHash(data);
      expect(hash.startsWith(HASH_PREFIX)).toBe(true);
      expect(hash).toMatch(/^#s=[A-Za-z0-9+\-$]+$/);
      expect(JSON.stringify(roundTrip(data))).toBe(JSON.stringify(data));
    }
  });

  it('round-trips unicode: accents, CJK, emoji, lone escapes and line separators', () => {
    const data = {
      title: 'Zoë’s “café” — 日本語のサーバー 🚀👩🏽‍💻',
      prompt: 'line\nbreak\ttab \u2028 \u2029 \\ "quoted" </script>',
      empty: '',
      nested: [{ ключ: 'значение' }, null, true, 0, -1.5e-7]
    };
    expect(roundTrip(data)).toEqual(data);
  });

  it('round-trips any JSON object (property)', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (v) => {
        // JSON itself turns -0 into 0; compare through JSON.
        expect(JSON.stringify(roundTrip(v))).toBe(JSON.stringify(v));
      }),
      { numRuns: 300 }
    );
  });

  it('says a link holding JSON that is not an object holds no scenario', () => {
    for (const [v, what] of [
      [[1, 2], 'an array'],
      [null, 'null'],
      [42, 'a number'],
      ['text', 'a string']
    ] as const) {
      expect(decodeScenarioHash(encodeScenarioHash(v))).toEqual({
        ok: false,
        error: `the scenario link does not hold a scenario: it decodes to ${what}, not a scenario object.`
      });
    }
  });

  it('keeps "__proto__" and "constructor" as ordinary members', () => {
    const text = '{"__proto__":{"a":1},"constructor":2}';
    const d = decodeScenarioHash(encodeScenarioHash(JSON.parse(text)));
    expect(d.ok && JSON.stringify(d.data)).toBe(text);
  });

  it('keeps a 50-server scenario under 8 KB of URL, and it still parses', () => {
    const scenario = fiftyServerScenario();
    const parsed = parseScenario(scenario);
    expect(parsed.ok ? [] : parsed.errors).toEqual([]);
    const hash = encodeScenarioHash(scenario);
    const url = `https://example.github.io/sampling-policy-lab/${hash}`;
    expect(url.length).toBeLessThan(8 * 1024);
    expect(roundTrip(scenario)).toEqual(scenario);
  });

  it('accepts the hash without its "#", with "+" turned into spaces, and percent-encoded', () => {
    const data = { seed: 7, title: 'x?y&z=1 +' };
    const hash = encodeScenarioHash(data);
    expect(decodeScenarioHash(hash.slice(1))).toEqual({ ok: true, data });
    expect(decodeScenarioHash(hash.replace(/\+/g, ' '))).toEqual({ ok: true, data });
    const encoded = HASH_PREFIX + encodeURIComponent(hash.slice(HASH_PREFIX.length));
    expect(decodeScenarioHash(encoded)).toEqual({ ok: true, data });
  });

  it('says when the address is not a scenario link at all', () => {
    expect(errorOf('')).toMatch(/not a scenario link/);
    expect(errorOf('#')).toMatch(/not a scenario link/);
    expect(errorOf('#lesson-3')).toMatch(/not a scenario link.*#lesson-3/);
    expect(hasScenarioHash('#lesson-3')).toBe(false);
    expect(hasScenarioHash('#s=abc')).toBe(true);
    expect(hasScenarioHash('s=abc')).toBe(true);
  });

  it('says when the link is empty', () => {
    expect(errorOf('#s=')).toMatch(/empty/);
  });

  it('says when the link is corrupted: foreign characters, or damage that stops decompression', () => {
    expect(errorOf('#s=abc*def')).toMatch(/corrupted.*"\*"/);
    expect(errorOf('#s=!!!!')).toMatch(/corrupted/);
    // Cut short in copying: what is left is not a whole compressed stream.
    const full = encodeScenarioHash(fiftyServerScenario());
    const cut = decodeScenarioHash(full.slice(0, Math.floor(full.length / 2)));
    expect(cut.ok).toBe(false);
    if (!cut.ok) expect(cut.error).toMatch(/corrupted/);
  });

  it('says when the payload decompresses but is not JSON', () => {
    const hash = HASH_PREFIX + compressToEncodedURIComponent('{"seed": 1,');
    expect(errorOf(hash)).toMatch(/corrupted: its content is not JSON/);
    const words = HASH_PREFIX + compressToEncodedURIComponent('hello world');
    expect(errorOf(words)).toMatch(/not JSON/);
  });

  it('refuses a link too long to be a scenario without trying to decompress it', () => {
    expect(errorOf(HASH_PREFIX + 'A'.repeat(MAX_HASH_CHARS + 1))).toMatch(/too long/);
  });

  it('refuses to encode what is not JSON', () => {
    expect(() => encodeScenarioHash(undefined)).toThrow(TypeError);
  });
});

describe('a link carrying a fork (issue #10)', () => {
  const scenario = JSON.parse(
    readFileSync(new URL('reconnect-bypass.json', SCENARIO_DIR), 'utf8')
  ) as Record<string, unknown>;
  const fork = {
    version: 1,
    atMs: 600_000,
    lane: 'A',
    change: { kind: 'config', client: { store: 'durable' }, what: 'lane A: store → durable' }
  };

  it('round-trips the scenario and the fork, and the fork is a valid ForkSpec', () => {
    const hash = encodeScenarioHash(scenario, fork);
    expect(hash).toContain('&f=');
    const s = decodeScenarioHash(hash);
    expect(s.ok && s.data).toEqual(scenario);
    const f = decodeForkHash(hash);
    expect(f.ok && f.fork).toEqual(fork);
    const parsed = parseFork(f.ok ? f.fork : null);
    expect(parsed.ok).toBe(true);
  });

  it('a link without a fork has none; a damaged fork says so and keeps the scenario readable', () => {
    const plain = encodeScenarioHash(scenario);
    expect(decodeForkHash(plain)).toEqual({ ok: true, fork: null });
    const damaged = `${plain}&f=%%%`;
    expect(decodeScenarioHash(damaged).ok).toBe(true);
    const f = decodeForkHash(damaged);
    expect(f.ok).toBe(false);
    expect(!f.ok && f.error).toContain('the fork in the link is corrupted');
  });

  describe('the run’s timeline (issue #18)', () => {
    const edit = {
      t: Date.parse('2026-03-10T09:03:00Z'),
      events: 412,
      kind: 'policy',
      lane: 'A',
      policy: defaultPolicy()
    } as const;
    const restart = {
      t: Date.parse('2026-03-10T09:20:00Z'),
      events: 3000,
      kind: 'restart'
    } as const;

    it('travels as &e= beside the fork, each part read back whole', () => {
      const link = linkOf({
        actions: [restart],
        ahead: [],
        fork: { spec: fork as never, base: [edit] },
        human: []
      });
      expect(link.fork).toEqual(fork);
      const hash = encodeScenarioHash(scenario, link.fork, link.timeline);
      expect(hash).toMatch(/^#s=[^&]+&f=[^&]+&e=[^&]+$/);
      expect(
        decodeScenarioHash(hash).ok && (decodeScenarioHash(hash) as { data: unknown }).data
      ).toEqual(scenario);
      const f = decodeForkHash(hash);
      const t = decodeTimelineHash(hash);
      expect(f.ok && f.fork).toEqual(fork);
      expect(t.ok && t.timeline).toEqual({ version: 1, actions: [restart], bases: [[edit]] });
      const run = parseLinkTimeline(t.ok ? t.timeline : null, f.ok ? f.fork : null);
      expect(run).toEqual({
        ok: true,
        run: { actions: [restart], fork: { spec: fork, base: [edit] }, human: [] }
      });
    });

    it('a fork of a fork keeps each fork’s own branch, first fork first', () => {
      const second = { ...fork, atMs: 1_200_000, lane: 'B' };
      const link = linkOf({
        actions: [],
        ahead: [restart],
        fork: { spec: second as never, base: [], parents: [{ spec: fork as never, base: [edit] }] },
        human: ['B']
      });
      expect(link.fork).toEqual([fork, second]);
      expect(link.timeline).toEqual({
        version: 1,
        actions: [restart],
        bases: [[edit], []],
        human: ['B']
      });
      const run = parseLinkTimeline(link.timeline, link.fork);
      expect(run.ok && run.run.fork).toEqual({
        spec: second,
        base: [],
        parents: [{ spec: fork, base: [edit] }]
      });
    });

    it('a run nobody changed makes the link it always made; such a link carries no timeline', () => {
      const link = linkOf({
        actions: [],
        ahead: [],
        fork: { spec: fork as never, base: [] },
        human: []
      });
      expect(link.timeline).toBeNull();
      const hash = encodeScenarioHash(scenario, link.fork, link.timeline);
      expect(hash).toBe(encodeScenarioHash(scenario, fork));
      expect(decodeTimelineHash(hash)).toEqual({ ok: true, timeline: null });
    });

    it('a damaged timeline says so and where; the scenario and the fork still read', () => {
      const hash = encodeScenarioHash(scenario, fork, {
        version: 1,
        actions: [{ ...restart, lane: 'A' }],
        bases: [[]]
      });
      const t = decodeTimelineHash(hash);
      const r = parseLinkTimeline(t.ok ? t.timeline : null, fork);
      expect(r.ok ? [] : r.errors.map((e) => e.path)).toEqual(['$.actions[0].lane']);
      expect(parseLinkTimeline({ version: 1, actions: [] }, fork)).toEqual({
        ok: false,
        errors: [
          {
            path: '$.bases',
            message: 'the link has 1 fork and 0 lists of the actions they were made on'
          }
        ]
      });
      const cut = `${encodeScenarioHash(scenario, fork)}&e=%%%`;
      expect(decodeScenarioHash(cut).ok).toBe(true);
      expect(decodeForkHash(cut).ok).toBe(true);
      expect(decodeTimelineHash(cut)).toEqual({
        ok: false,
        error: 'the timeline in the link is corrupted'
      });
    });
  });
});
