/**
 * Copies of a running engine (issue #10: restore to t in well under a second).
 *
 * A run's state is spread over objects that point at each other — lanes, hosts, requests in
 * flight, server agents, the clock's queue. A copy must be a second, independent engine that
 * continues exactly as the original would (checkpoint.spec.ts: byte for byte). One generic copier
 * makes it: every class that holds run state registers its copy rules with {@link copyable} — data,
 * not code — and {@link CloneMap} copies every own field of its instances deep, cycles and sharing
 * kept. A class declares only its exceptions (a field shared, copied shallow, dropped or made
 * fresh), so a field added and forgotten is copied, never silently left behind; and when it
 * cannot be copied at the moment (a request's run mid-step), why. No class has a copy method of
 * its own: the client host and a request's run (client/host.ts, machine/authorize/fast.ts) are
 * copied by their rules too.
 *
 * The run's state holds no closure: the simulation's clock holds its events as data
 * (sim/world/events.ts); what waits on something later — a request's step, a timer of the table
 * executor, a request's outcome — is a record with a method (client/host-steps.ts), and a
 * request's steps are its host's methods (client/host.ts). A function found in a field throws
 * {@link NotCloneable} naming the class and the field, and the caller re-simulates instead.
 *
 * Immutable values (scenarios, policies, frames, requests' params, rate cards) are shared, never
 * copied: nothing in the engine changes them after they are made.
 *
 * The same registration names the class for the snapshots a page saves (sim/engine/snapshot*.ts):
 * each rule carries a stable `name` ('clock.Entry': its module, its class), the one a snapshot
 * stores. A name is required and unique — checked when the class registers — so every class a
 * copy can hold can be saved and read back under a name that does not depend on where or whether
 * a run happened to meet it.
 *
 * Just over 400 lines: the rules' vocabulary and the walk that applies them are read together.
 */

/** A run's state cannot be copied here (a closure in a field, say): re-simulate instead. */
export class NotCloneable extends Error {
  constructor(what: string) {
    super(`cannot copy the engine: ${what}`);
    this.name = 'NotCloneable';
  }
}

/**
 * What the copy of one field gets:
 * - `nested` (the default for every field not named): deep, through the map — objects of copyable
 *   classes, arrays, Maps, Sets and plain records, each once, cycles and sharing kept;
 * - `shared`: the same value — one nothing changes once made (a request, a scenario, a policy);
 * - `shallow`: a new container (array, Map, Set or record) holding the same elements;
 * - `dropped`: `undefined` — a cache or a handle the copy does without (it is made again on use);
 * - `{ fresh }`: what `fresh(original, map)` returns — a new value for the copy (an empty cache;
 *   a value mostly shared with some part of it copied through the map);
 * - `{ both }`: the value `both`, written into the copy and into the original too — a flag that
 *   says the object alone holds something the two now share (machine/authorize/fast.ts: a run
 *   writes into its context in place while it owns it, and after a copy neither does: each copies
 *   before it writes).
 */
export type FieldRule =
  | 'nested'
  | 'shared'
  | 'shallow'
  | 'dropped'
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the original is the class's own
  | { fresh: (original: any, m: CloneMap) => unknown }
  | { both: unknown };

/** A class's copy rules: its exceptions to `nested` by field name, and how its copy is made. */
export interface CopyRules<T extends object> {
  /**
   * The class's stable name, `module.Class` by convention ('clock.Entry'): what a snapshot stores
   * for its instances (sim/engine/snapshot.ts). Renaming the class or moving it keeps this name;
   * changing a name changes the saved format (raise `SNAPSHOT_VERSION`).
   */
  name: string;
  /** Fields copied otherwise than deep (TypeScript `private` fields by their name). */
  fields?: Readonly<Record<string, FieldRule>>;
  /**
   * Makes the object the fields are copied into (an instance from the class's constructor, whose
   * fields are then overwritten) instead of `Object.create(prototype)`, given the original (whose
   * constructor arguments it may pass on). Why: V8 sizes a constructed object to its class's
   * fields, while one from `Object.create` has room for four in the object and keeps the rest in
   * a separate array — bigger, for a class with more fields and many instances, and a checkpoint
   * holds one copy of each.
   */
  blank?: (original: T) => T;
  /**
   * Why this object cannot be copied now (a request's run mid-step), or nothing when it can:
   * asked before the copy is made, a reason throws {@link NotCloneable} with it.
   */
  refuse?: (original: T) => string | null | undefined;
  /**
   * Copies, whole, each plain record held in the class's `nested` fields (a store's decisions),
   * instead of a spread whose nested objects are then copied. Why: a spread at a site that sees
   * records of many shapes (the whole engine's) makes an object that keeps its fields outside it
   * and its numbers boxed — half again the memory of a literal of the record's own shape.
   */
  records?: (r: never) => object;
}

/** A class's rules, as the copier reads them. */
interface How {
  fields: Map<string, FieldRule> | null;
  blank: ((original: object) => object) | undefined;
  records: ((r: object) => object) | undefined;
  refuse: ((original: object) => string | null | undefined) | undefined;
}

/** A class's rules as registered (`CopyRules`, its field rules in a Map). */
interface Registered {
  fields: Map<string, FieldRule>;
  blank?: (original: object) => object;
  records?: (r: object) => object;
  refuse?: (original: object) => string | null | undefined;
}

/** Rules by prototype, as registered. */
const RULES = new WeakMap<object, Registered>();
/** Rules by prototype, merged over its ancestors' (null: the class is not copyable). */
const RESOLVED = new WeakMap<object, How | null>();
/** Registered classes by name, in the order they registered. */
const NAMED = new Map<string, CopyableClass>();
/** Registered names by prototype. */
const NAMES = new WeakMap<object, string>();

/** A class registered with {@link copyable}. */
export type CopyableClass = abstract new (...args: never[]) => object;

/**
 * Let {@link CloneMap} copy instances of `cls`: a new object of the same prototype with every own
 * field copied by its {@link FieldRule}, under the stable `rules.name` (which snapshots store).
 * Subclasses inherit the rules and may add their own (registering under their own name): a
 * subclass that did not register is copied by its ancestors' rules but has no name of its own, so
 * a snapshot refuses it (or stores what the caller substitutes: a durable store). Frozen values
 * are shared. A class with `#private` members cannot be copied this way — the copy, made without
 * its constructor, fails their brand check: they are TypeScript `private` instead.
 *
 * Throws when the name is missing or another class has it already: a mistake in the program,
 * found when its module loads. (The same class name registering again is a module evaluated
 * twice — a development server's hot update: the newer class takes the name.)
 */
export function copyable<T extends object>(
  cls: abstract new (...args: never[]) => T,
  rules: CopyRules<T>
): void {
  const name = (rules as Partial<CopyRules<T>> | undefined)?.name;
  if (typeof name !== 'string' || !name)
    throw new Error(`copyable(${cls.name}): its rules need a stable name ('module.Class')`);
  const holder = NAMED.get(name);
  if (holder && holder !== cls && holder.name !== cls.name)
    throw new Error(`copyable(${cls.name}): the name '${name}' is class ${holder.name}'s`);
  const before = NAMES.get(cls.prototype as object);
  if (before !== undefined && before !== name)
    throw new Error(`copyable(${cls.name}): registered already, as '${before}'`);
  NAMED.set(name, cls);
  NAMES.set(cls.prototype as object, name);
  RULES.set(cls.prototype as object, {
    fields: new Map(Object.entries(rules.fields ?? {})),
    blank: rules.blank as Registered['blank'],
    records: rules.records as Registered['records'],
    refuse: rules.refuse as Registered['refuse']
  });
}

/**
 * Why an object of `cls` cannot be copied now (its rules' `refuse`, its own or inherited), for a
 * caller that keeps run state otherwise than by copying it (a snapshot): the same reasons hold.
 */
export function refusalOf(
  cls: CopyableClass
): ((original: object) => string | null | undefined) | undefined {
  return howOf(cls.prototype as object)?.refuse;
}

/** Every class registered so far, by its stable name, in the order they registered. */
export function copyableClasses(): ReadonlyMap<string, CopyableClass> {
  return NAMED;
}

/** The rules for objects of prototype `proto`: its own, over its ancestors' (cached). */
function howOf(proto: object): How | null {
  const known = RESOLVED.get(proto);
  if (known !== undefined) return known;
  const chain: Registered[] = [];
  for (let p: object | null = proto; p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
    const r = RULES.get(p);
    if (r) chain.unshift(r);
  }
  let how: How | null = null;
  if (chain.length) {
    const fields = new Map<string, FieldRule>();
    let records: Registered['records'];
    let refuse: Registered['refuse'];
    for (const r of chain) {
      for (const [k, v] of r.fields) fields.set(k, v);
      records = r.records ?? records;
      refuse = r.refuse ?? refuse;
    }
    // A base's blank would make an object of the base class: only the class's own counts.
    how = { fields: fields.size ? fields : null, blank: RULES.get(proto)?.blank, records, refuse };
  }
  RESOLVED.set(proto, how);
  return how;
}

/**
 * One copy of an engine in progress: originals to their copies, made once each.
 *
 * Objects of copyable classes are made first and filled later: asked for, a copy is made (blank)
 * and registered at once, and its fields are copied when the walk reaches it. So any object's
 * copy exists the moment another asks for it, whatever the order, and an owner's fields never
 * need its parts filled first. Substitutes — an original the caller maps to an object of its own
 * choosing (a lane's store with the copy's hooks) — are registered with {@link set} first.
 */
export class CloneMap {
  readonly #copies = new Map<object, unknown>();
  /** Made and not yet filled: (original, copy, rules) triples, in the order they were made. */
  readonly #todo: unknown[] = [];
  #walking = false;
  /** The object and field being filled, for an error's message. */
  #owner: object | null = null;
  #field = '';
  /** How the plain records of the object being filled are copied (`CopyRules.records`). */
  #records: ((r: object) => object) | undefined = undefined;

  /**
   * How {@link box} copies an original nothing registered (else a shallow copy): an engine
   * checkpoint's copy sets it, so that a stored decision a request in flight holds is the copy in
   * its store's list (sim/engine/engine.ts `copyEngine`), which lists its decisions without
   * registering each.
   */
  boxWith: (<T extends object>(o: T) => T) | null = null;

  /** Register `copy` as the copy of `original` (a substitute); returns `copy`. */
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

  /** Whether `original` has been copied (or substituted) already. */
  has(original: object): boolean {
    return this.#copies.has(original);
  }

  /**
   * The copy of `x`, as a `nested` field's — an object of a copyable class, or a container or
   * record deep — complete when this returns (unless called inside a walk: see {@link walk}).
   */
  get<T extends object>(x: T): T;
  get<T extends object>(x: T | null): T | null;
  get<T extends object>(x: T | undefined): T | undefined;
  get<T extends object>(x: T | null | undefined): T | null | undefined {
    if (x === null || x === undefined) return x;
    const known = this.#copies.get(x);
    if (known !== undefined) return known as T;
    if (this.#walking) return this.#value(x) as T;
    return this.walk(() => this.#value(x) as T);
  }

  /**
   * Run `fn`, whose `get`s make copies without filling them, then fill every copy made: an entry
   * point that registers substitutes as it goes (engine.ts: each lane's store) asks for the
   * objects here, and no copy is filled before they are all registered.
   */
  walk<T>(fn: () => T): T {
    if (this.#walking) return fn();
    this.#walking = true;
    try {
      const out = fn();
      this.#drain();
      return out;
    } finally {
      this.#walking = false;
      this.#todo.length = 0;
      this.#owner = null;
    }
  }

  /**
   * The copy of a plain mutable object (a record in a map, a stored decision several owners
   * hold): a shallow copy, made once, so owners that shared the original share the copy.
   */
  box<T extends object>(o: T): T {
    if (this.#copies.has(o)) return this.#copies.get(o) as T;
    const c = this.boxWith ? this.boxWith(o) : ((Array.isArray(o) ? [...o] : { ...o }) as T);
    this.#copies.set(o, c);
    return c;
  }

  /** A copy of `x` (an object of a class), by its rules, registered: the walk fills its fields. */
  #make<T extends object>(x: T): T {
    const proto = Object.getPrototypeOf(x) as object | null;
    const how = proto && howOf(proto);
    if (!how)
      throw new NotCloneable(`${describe(x)} is not copyable (${this.#where() || 'asked'})`);
    const why = how.refuse?.(x);
    if (why) throw new NotCloneable(why);
    const c = (how.blank ? how.blank(x) : Object.create(proto)) as T;
    this.#copies.set(x, c);
    this.#todo.push(x, c, how);
    return c;
  }

  /** Fill the copies made, in order (filling one may make more). */
  #drain(): void {
    const todo = this.#todo;
    for (let i = 0; i < todo.length; i += 3)
      this.#fill(todo[i] as object, todo[i + 1] as object, todo[i + 2] as How);
  }

  /** `x`'s own fields into `c`, each by its rule. */
  #fill(x: object, c: object, how: How): void {
    const from = x as Record<string, unknown>;
    const to = c as Record<string, unknown>;
    const fields = how.fields;
    this.#owner = x;
    this.#records = how.records;
    for (const k of Object.keys(from)) {
      const v = from[k];
      const rule = fields?.get(k);
      if (rule === undefined || rule === 'nested') {
        if (isObject(v)) {
          this.#field = k;
          to[k] = this.#value(v);
        } else to[k] = v;
      } else if (rule === 'shared') to[k] = v;
      else if (rule === 'shallow') to[k] = shallow(v);
      else if (rule === 'dropped') to[k] = undefined;
      else if ('fresh' in rule) to[k] = rule.fresh(x, this);
      else to[k] = from[k] = rule.both;
    }
  }

  /** Which class's field is being filled. */
  #where(): string {
    return this.#owner ? `${this.#owner.constructor.name}.${this.#field}` : '';
  }

  /** A value's copy, deep (see {@link FieldRule} `nested`). */
  #value(v: unknown): unknown {
    if (typeof v === 'function')
      throw new NotCloneable(`${this.#where()} holds a function (${v.name || 'a closure'})`);
    if (typeof v !== 'object' || v === null) return v;
    // Every copy is an object: undefined means none yet.
    const known = this.#copies.get(v);
    if (known !== undefined) return known;
    if (Object.isFrozen(v)) return v;
    const proto = Object.getPrototypeOf(v) as object | null;
    if (proto === Array.prototype) {
      // slice, then the objects in it replaced: the copy is exactly as long as the original
      // (pushing one by one leaves spare capacity), and a list of numbers (a chart's series, a
      // history's times) is copied at once. Its elements are read only when one is an object
      // (`firstObject` first): an element read here, where arrays of every kind pass, lets the
      // optimiser turn an array of numbers into one of boxed numbers, twice the memory.
      const a = v as unknown[];
      const c = a.slice();
      this.#copies.set(v, c);
      const first = firstObject(a);
      if (first >= 0)
        for (let i = first; i < c.length; i++) if (isObject(c[i])) c[i] = this.#value(c[i]);
      return c;
    }
    if (proto === Map.prototype) {
      const c = new Map<unknown, unknown>();
      this.#copies.set(v, c);
      for (const [k, e] of v as Map<unknown, unknown>)
        c.set(isObject(k) ? this.#value(k) : k, isObject(e) ? this.#value(e) : e);
      return c;
    }
    if (proto === Set.prototype) {
      const c = new Set<unknown>();
      this.#copies.set(v, c);
      for (const e of v as Set<unknown>) c.add(isObject(e) ? this.#value(e) : e);
      return c;
    }
    if (proto === Object.prototype && this.#records) {
      const c = this.#records(v);
      this.#copies.set(v, c);
      return c;
    }
    if (proto === Object.prototype || proto === null) {
      // A spread, then the objects in it replaced: the copy has the original's shape at once
      // (adding fields one by one turns a record of more than a dozen, a lane's counters, into a
      // slow dictionary).
      const c = (
        proto === null ? Object.assign(Object.create(null) as object, v) : { ...v }
      ) as Record<string, unknown>;
      this.#copies.set(v, c);
      for (const k in c) if (isObject(c[k])) c[k] = this.#value(c[k]);
      return c;
    }
    return this.#make(v);
  }
}

/** A new container with the same elements (a `shallow` field); anything else as it is. */
function shallow(v: unknown): unknown {
  if (typeof v !== 'object' || v === null) return v;
  if (Array.isArray(v)) return v.slice();
  if (v instanceof Map) return new Map(v);
  if (v instanceof Set) return new Set(v);
  return { ...v };
}

/**
 * The index of `a`'s first object or function, or -1: `findIndex(isObject)` without its call per
 * element, which boxed every element of a list of doubles (a chart's series) into a new number
 * to pass it — ~1.4 MB/s of the sim worker's garbage in live play, where engine checkpoints are
 * taken several times a second (bench:profile:worker --heap).
 */
function firstObject(a: readonly unknown[]): number {
  for (let i = 0; i < a.length; i++) {
    const e = a[i];
    if ((typeof e === 'object' && e !== null) || typeof e === 'function') return i;
  }
  return -1;
}

/** What the copier has to look at: an object or a function (which it refuses). */
function isObject(v: unknown): boolean {
  return (typeof v === 'object' && v !== null) || typeof v === 'function';
}

function describe(x: object): string {
  const name = (x as { constructor?: { name?: string } }).constructor?.name;
  return name ? `an object of class ${name}` : 'an object';
}
