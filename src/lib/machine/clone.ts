/**
 * Copies of a running engine (issue #10: restore to t in well under a second).
 *
 * A run's state is spread over objects that point at each other — lanes, hosts, requests in
 * flight, server agents, the clock's queue. A copy must be a second, independent engine that
 * continues exactly as the original would (checkpoint.spec.ts: byte for byte). So:
 *
 * - every class that holds run state has `clone(m)`: it makes its copy, registers it with
 *   `m.set(this, copy)` *before* copying what it points at (cycles end there), and copies its
 *   references through `m.get`;
 * - the run's state holds no closure: the simulation's clock holds its events as data
 *   (sim/world/events.ts), copied as they are; what waits on something later — a request's step
 *   (a dialog's answer, a stream's events, a flight's verdict), a timer of the table executor, a
 *   request's outcome — is a record with a method (client/host-steps.ts, client/driver.ts), and
 *   is copied as one. What cannot be copied — a callback source (the handler's, a page's), an
 *   XState actor's timers — throws {@link NotCloneable}, and the caller re-simulates instead.
 *
 * Immutable values (scenarios, policies, frames, requests' params, rate cards) are shared, never
 * copied: nothing in the engine changes them after they are made.
 */

/** A run's state cannot be copied here (a closure without reviver, say): re-simulate instead. */
export class NotCloneable extends Error {
  constructor(what: string) {
    super(`cannot copy the engine: ${what}`);
    this.name = 'NotCloneable';
  }
}

/** Anything with a clone method. */
export interface Cloneable<T> {
  clone(m: CloneMap): T;
}

/** The classes the generic copier copies, by prototype: the names of their shared fields. */
const COPYABLE = new WeakMap<
  object,
  { shared: ReadonlySet<string>; blank: (() => object) | undefined }
>();

/**
 * Let {@link CloneMap} copy instances of `cls` without a `clone` method of their own: a new
 * object of the same prototype, every own field copied deep (objects of copyable classes,
 * arrays, Maps, Sets and plain records, once each, cycles kept), but for the fields named in
 * `shared`, which the copy shares — values nothing changes once made (a request and its params,
 * a scenario's rate card, a step's input). Frozen values are shared too. A function in a field
 * cannot be copied ({@link NotCloneable}); a class with `#private` members (fields or methods)
 * cannot be copied this way at all — the copy, made without its constructor, fails their brand
 * check — and keeps its `clone` method (or turns them into TypeScript `private` fields).
 *
 * `blank`, when given, makes the object the fields are copied into (an instance from the class's
 * constructor, whose fields are then overwritten) instead of `Object.create(prototype)`. Why: V8
 * sizes a constructed object to its class's fields, while one from `Object.create` has room for
 * four in the object and keeps the rest in a separate array — bigger, for a class with more
 * fields and many instances (the random streams: every server of every lane has its own), and a
 * checkpoint holds one copy of each.
 */
export function copyable<T extends object>(
  cls: abstract new (...args: never[]) => T,
  shared: string[] = [],
  blank?: () => T
) {
  COPYABLE.set(cls.prototype as object, { shared: new Set(shared), blank });
}

/** One copy of an engine in progress: originals to their copies, made once each. */
export class CloneMap {
  readonly #copies = new Map<object, unknown>();
  readonly #later: (() => void)[] = [];

  /** Register `copy` as the copy of `original`; returns `copy`. Call it before copying fields. */
  set<T extends object>(original: T, copy: T): T {
    this.#copies.set(original, copy);
    return copy;
  }

  /** The copy registered for `original`; throws when there is none yet. */
  registered<T extends object>(original: T): T {
    if (!this.#copies.has(original))
      throw new NotCloneable(`${describe(original)} was needed before its owner was copied`);
    return this.#copies.get(original) as T;
  }

  /**
   * Run `fn` once every object has its copy (`finish`): what points at everything — the clock's
   * queue, the open consent dialogs — is filled in last, so owners exist before what they hold.
   */
  later(fn: () => void): void {
    this.#later.push(fn);
  }

  /** Run what was put off with `later`, in order (what it runs may put off more). */
  finish(): void {
    for (let i = 0; i < this.#later.length; i++) this.#later[i]!();
    this.#later.length = 0;
  }

  /** Whether `original` has been copied already. */
  has(original: object): boolean {
    return this.#copies.has(original);
  }

  /** The copy of `x` (made by its `clone` method the first time it is asked for). */
  get<T extends object>(x: T): T;
  get<T extends object>(x: T | null): T | null;
  get<T extends object>(x: T | undefined): T | undefined;
  get<T extends object>(x: T | null | undefined): T | null | undefined {
    if (x === null || x === undefined) return x;
    if (this.#copies.has(x)) return this.#copies.get(x) as T;
    const clone = (x as Partial<Cloneable<T>>).clone;
    if (typeof clone !== 'function') {
      const how = COPYABLE.get(Object.getPrototypeOf(x) as object);
      if (!how) throw new NotCloneable(`${describe(x)} has no clone method`);
      const blank = how.blank ? how.blank() : Object.create(Object.getPrototypeOf(x) as object);
      return this.#fields(x, blank as T, how.shared);
    }
    const c = clone.call(x, this);
    if (!this.#copies.has(x)) this.#copies.set(x, c);
    return c;
  }

  /** `x`'s own fields into `c` (registered first), deep but for `shared` ones. */
  #fields<T extends object>(x: T, c: T, shared: ReadonlySet<string>): T {
    this.#copies.set(x, c);
    const from = x as Record<string, unknown>;
    const to = c as Record<string, unknown>;
    for (const k of Object.keys(from)) to[k] = shared.has(k) ? from[k] : this.#value(from[k]);
    return c;
  }

  /** A field's value in the copy (see {@link copyable}). */
  #value(v: unknown): unknown {
    if (typeof v === 'function') throw new NotCloneable(`a closure (${v.name || 'anonymous'})`);
    if (typeof v !== 'object' || v === null || Object.isFrozen(v)) return v;
    if (this.#copies.has(v)) return this.#copies.get(v);
    const proto = Object.getPrototypeOf(v) as object | null;
    if (proto === Array.prototype) {
      // slice, then the objects in it replaced: the copy is exactly as long as the original
      // (pushing one by one leaves spare capacity), and a list of numbers (a chart's series) is
      // copied at once.
      const c = (v as unknown[]).slice();
      this.#copies.set(v, c);
      for (let i = 0; i < c.length; i++) if (isObject(c[i])) c[i] = this.#value(c[i]);
      return c;
    }
    if (proto === Map.prototype) {
      const c = new Map<unknown, unknown>();
      this.#copies.set(v, c);
      for (const [k, e] of v as Map<unknown, unknown>) c.set(this.#value(k), this.#value(e));
      return c;
    }
    if (proto === Set.prototype) {
      const c = new Set<unknown>();
      this.#copies.set(v, c);
      for (const e of v as Set<unknown>) c.add(this.#value(e));
      return c;
    }
    if (proto === Object.prototype) {
      // A spread, then the objects in it replaced: the copy has the original's shape at once
      // (adding fields one by one turns a record of more than a dozen, a lane's counters, into a
      // slow dictionary).
      const c: Record<string, unknown> = { ...(v as Record<string, unknown>) };
      this.#copies.set(v, c);
      for (const k in c) if (isObject(c[k])) c[k] = this.#value(c[k]);
      return c;
    }
    if (proto === null) return this.#fields(v, Object.create(proto) as object, NONE);
    return this.get(v);
  }

  /**
   * The copy of `o` made by `make` (once: later calls return the same copy). For plain records
   * that hold copies of their own (a task's state and counters, a pending request).
   */
  memo<T extends object>(o: T, make: () => T): T {
    if (this.#copies.has(o)) return this.#copies.get(o) as T;
    const c = make();
    this.#copies.set(o, c);
    return c;
  }

  /**
   * The copy of a plain mutable object (a record in a map, a stored decision several owners
   * hold): a shallow copy, made once, so owners that shared the original share the copy.
   */
  box<T extends object>(o: T): T {
    if (this.#copies.has(o)) return this.#copies.get(o) as T;
    const c = (Array.isArray(o) ? [...o] : { ...o }) as T;
    this.#copies.set(o, c);
    return c;
  }
}

const NONE: ReadonlySet<string> = new Set();

/** What {@link CloneMap}'s copier has to look at: an object or a function (which it refuses). */
function isObject(v: unknown): boolean {
  return (typeof v === 'object' && v !== null) || typeof v === 'function';
}

function describe(x: object): string {
  const name = (x as { constructor?: { name?: string } }).constructor?.name;
  return name ? `an object of class ${name}` : 'an object';
}
