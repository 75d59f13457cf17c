/**
 * The snapshot codec (snapshot.ts) on small graphs: what a plain value must keep for the objects
 * it is decoded into to behave as the originals — classes, shared references and cycles, Maps and
 * Sets, constants compared by identity, externals — and what it refuses, saying where.
 */
import { deserialize, serialize } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { Rng } from '../world/rng';
import {
  decode,
  encode,
  SNAPSHOT_VERSION,
  SnapshotError,
  SnapshotRegistry,
  type Snapshot
} from './snapshot';

const NONE = Object.freeze({ none: true });

class Node {
  next: Node | null = null;
  seen = new Set<Node>();
  tags = new Map<string, Node | typeof NONE>();
  constructor(public name: string) {}
  hello(): string {
    return `I am ${this.name}`;
  }
}

class Owner {
  private items: Node[] = [];
  private readonly scenario: { title: string };
  /** A closure: dropped from the snapshot, re-made by `revive`. */
  onChange: (() => number) | null = null;
  changes = 0;
  constructor(scenario: { title: string }) {
    this.scenario = scenario;
    this.wire();
  }
  wire(): void {
    this.onChange = () => ++this.changes;
  }
  add(n: Node): void {
    this.items.push(n);
    this.onChange?.();
  }
  get count(): number {
    return this.items.length;
  }
  get title(): string {
    return this.scenario.title;
  }
}

class Hidden {
  #secret = 1;
  get secret(): number {
    return this.#secret;
  }
}

const registry = () =>
  new SnapshotRegistry()
    .add('Node', Node)
    .add('Owner', Owner, { drop: ['onChange'], revive: (o) => o.wire() })
    .add('Rng', Rng)
    .constant('NONE', NONE);

/** Encode, copy as IndexedDB would (or as v8.serialize does), decode. */
function roundTrip<T>(x: T, via: 'structuredClone' | 'v8' = 'structuredClone', extra = {}): T {
  const r = registry();
  const snap = encode(r, x, { at: 1 }, extra);
  const stored: Snapshot =
    via === 'v8' ? (deserialize(serialize(snap)) as Snapshot) : structuredClone(snap);
  return decode<T>(r, stored, extra);
}

describe('snapshot codec', () => {
  it.each(['structuredClone', 'v8'] as const)(
    'keeps classes, cycles, shared references, Maps, Sets and constants (%s)',
    (via) => {
      const a = new Node('a');
      const b = new Node('b');
      a.next = b;
      b.next = a; // a cycle
      a.seen.add(b).add(a);
      a.tags.set('none', NONE).set('b', b);
      const graph = { a, b, both: [a, b, a], n: NaN, inf: -Infinity, z: -0, u: undefined };
      const back = roundTrip(graph, via);
      expect(back.a).toBeInstanceOf(Node);
      expect(back.a.hello()).toBe('I am a');
      expect(back.a.next).toBe(back.b);
      expect(back.b.next).toBe(back.a);
      expect(back.both[0]).toBe(back.a);
      expect(back.both[2]).toBe(back.a);
      expect([...back.a.seen]).toEqual([back.b, back.a]);
      expect(back.a.tags.get('none')).toBe(NONE);
      expect(back.a.tags.get('b')).toBe(back.b);
      expect(back.n).toBeNaN();
      expect(back.inf).toBe(-Infinity);
      expect(Object.is(back.z, -0)).toBe(true);
      expect('u' in back).toBe(true);
      expect(back.a).not.toBe(a);
    }
  );

  it('continues a random stream exactly where it was', () => {
    const rng = new Rng(2026);
    for (let i = 0; i < 1000; i++) rng.next();
    const copy = roundTrip(rng, 'v8');
    const ahead = Array.from({ length: 100 }, () => rng.next());
    expect(Array.from({ length: 100 }, () => copy.next())).toEqual(ahead);
  });

  it('leaves externals out and attaches the ones given; drops closures and revives them', () => {
    const scenario = { title: 'storm' };
    const o = new Owner(scenario);
    o.add(new Node('x'));
    const r = registry();
    const snap = encode(r, o, null, { externals: new Map([[scenario, 'scenario']]) });
    expect(JSON.stringify(structuredClone(snap))).not.toContain('storm');
    const given = { title: 'storm' };
    const back = decode<Owner>(r, structuredClone(snap), {
      externals: new Map([['scenario', given]])
    });
    expect(back.title).toBe('storm');
    expect((back as unknown as { scenario: object }).scenario).toBe(given);
    back.add(new Node('y'));
    expect(back.count).toBe(2);
    expect(back.changes).toBe(2); // the revived closure counts on the copy
    expect(o.changes).toBe(1);
  });

  it('keeps a frozen record frozen, and a shared one shared', () => {
    const f = Object.freeze({ k: [1, 2] });
    const back = roundTrip({ x: f, y: f });
    expect(Object.isFrozen(back.x)).toBe(true);
    expect(back.x).toBe(back.y);
    expect(back.x).toEqual({ k: [1, 2] });
  });

  it('refuses a function, naming the class and the field', () => {
    const a = new Node('a');
    a.tags.set('f', (() => 1) as unknown as Node);
    expect(() => encode(registry(), { a }, null)).toThrow(
      /class Node holds a function at \.a\.tags\.get\(#0\)/
    );
  });

  it('refuses an unregistered class, saying where it is', () => {
    class Stray {}
    const a = new Node('a');
    a.next = new Stray() as Node;
    expect(() => encode(registry(), [a], null)).toThrow(
      /class Stray at \[0\]\.next, which is not registered/
    );
  });

  it('refuses to register a class with #private state', () => {
    expect(() => new SnapshotRegistry().add('Hidden', Hidden)).toThrow(
      /class Hidden keeps #private state \(#secret\)/
    );
  });

  it('refuses a snapshot of another version, an unknown class or a missing external', () => {
    const r = registry();
    const snap = encode(r, new Node('a'), null);
    expect(() => decode(r, { ...snap, version: SNAPSHOT_VERSION + 1 })).toThrow(SnapshotError);
    expect(() => decode(new SnapshotRegistry(), snap)).toThrow(/names class 'Node', unknown here/);
    const ext = encode(r, { s: NONE, x: { t: 1 } }, null, {
      externals: new Map([[{ t: 1 }, 'never']])
    });
    expect(decode<{ s: object }>(r, ext).s).toBe(NONE);
    const missing = { t: 2 };
    const needs = encode(r, { missing }, null, { externals: new Map([[missing, 'scenario']]) });
    expect(() => decode(r, needs)).toThrow(/needs 'scenario', which was not given/);
  });

  it('walks a chain far longer than the stack is deep (the codec itself: structuredClone recurses)', () => {
    const head = new Node('0');
    let n = head;
    for (let i = 1; i < 30_000; i++) n = n.next = new Node(String(i));
    const r = registry();
    let back = decode<Node>(r, encode(r, head, null));
    let count = 1;
    while (back.next) {
      back = back.next;
      count++;
    }
    expect(count).toBe(30_000);
    expect(back.name).toBe('29999');
  });
});
